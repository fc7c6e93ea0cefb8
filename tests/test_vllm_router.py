"""LLM serving at scale: vllm-router (round robin) in front of two OpenAI-protocol replicas on
loopback; one replica is killed mid-run and no question fails."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

from chronorag.integrations.llm import LLMConfig
from chronorag.integrations.testing import ScriptedOpenAIServer
from chronorag.workflows.dense_qa.graph import build_graph

pytestmark = pytest.mark.slow

QUESTIONS = ["Who did Xi Jinping host a visit from?", "Who did Barack Obama criticize?",
             "Who made a visit to Japan?", "Who did China accuse?", "Whom did John Kerry consult?",
             "Who did Iran sign an agreement with?", "Who visited Russia?", "Whom did Japan praise?"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def router():
    exe = shutil.which("vllm-router")
    if exe is None:
        pytest.skip("vllm-router is not installed (pip install 'chronorag[postgres]')")
    reps = [ScriptedOpenAIServer([f"1. Answer from replica {i}"] * 100).start() for i in (0, 1)]
    port = _free_port()
    proc = subprocess.Popen(
        [exe, "--host", "127.0.0.1", "--port", str(port), "--policy", "round_robin",
         "--worker-urls", *(r.base_url.removesuffix("/v1") for r in reps),
         "--worker-startup-check-interval", "1", "--prometheus-port", str(_free_port()),
         "--log-level", "error"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{url}/models", timeout=2).read()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                err = proc.stderr.read().decode(errors="replace")[-1500:] if proc.stderr else ""
                for r in reps:
                    r.stop()
                pytest.fail(f"vllm-router did not come up: {err}")
            time.sleep(0.3)
    yield url, reps
    proc.terminate()
    proc.wait(timeout=30)
    for r in reps:
        r.stop()


def test_round_robin_and_a_replica_killed_mid_run(router, sample_index):
    url, reps = router
    cfg = LLMConfig(base_url=url, max_retries=0)  # no client retries: the router alone must cover the loss
    g = build_graph(str(sample_index.path), llm=cfg)
    answers = []
    for i, q in enumerate(QUESTIONS):
        if i == 4:
            reps[0].stop()  # replica 0 goes away mid-run
            served_before = len(reps[0].requests)
        out = g.invoke({"question": q})
        answers.append(out["answers"])
    assert all(a and a[0].startswith("Answer from replica") for a in answers)  # no question failed
    # round robin before the kill: both replicas served; after it, only replica 1
    assert answers[:4].count(["Answer from replica 0"]) == 2 and answers[:4].count(["Answer from replica 1"]) == 2
    assert all(a == ["Answer from replica 1"] for a in answers[4:])
    assert len(reps[0].requests) == served_before == 2 and len(reps[1].requests) == 6
    assert all("messages" in r for r in reps[1].requests)
