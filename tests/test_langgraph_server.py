"""The graphs in langgraph.json serve from `langgraph dev` (the API behind LangGraph Studio), offline."""

import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 5) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


def _post(url: str, body: dict, timeout: float = 120) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def test_langgraph_json_lists_compiled_graphs():
    cfg = json.loads((ROOT / "langgraph.json").read_text())
    assert set(cfg["graphs"]) >= {"temptool", "dense_qa"}
    from langgraph.graph.state import CompiledStateGraph

    for spec in cfg["graphs"].values():
        module, attr = spec.split(":")  # importable module specs: works from any directory
        graph = getattr(importlib.import_module(module), attr)
        assert isinstance(graph, CompiledStateGraph) and graph.checkpointer is None


def test_langgraph_dev_serves_temptool(ecb_index, tmp_path):
    exe = shutil.which("langgraph", path=str(Path(sys.executable).parent)) or shutil.which("langgraph")
    if exe is None:
        pytest.fail("langgraph CLI missing: install the 'studio' extra (scripts/test.sh does)")
    port = _free_port()
    env = {**os.environ, "CHRONORAG_INDEX_DIR": str(ecb_index.path), "LANGGRAPH_CLI_NO_ANALYTICS": "1",
           "LANGGRAPH_NO_VERSION_CHECK": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("CHRONORAG_BASE_URL", None)
    log = open(tmp_path / "server.log", "w")
    # run from a scratch directory so the server's state files (.langgraph_api) stay out of the repo
    proc = subprocess.Popen([exe, "dev", "--no-browser", "--no-reload", "--port", str(port),
                             "--config", str(ROOT / "langgraph.json")], cwd=tmp_path, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 120
        while True:
            try:
                assert _get(f"{base}/ok")["ok"] is True
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    pytest.fail("langgraph dev did not start:\n" + (tmp_path / "server.log").read_text()[-3000:])
                time.sleep(1)
        out = _post(f"{base}/runs/wait", {"assistant_id": "temptool",
                                          "input": {"question": "Before Germany, who did the ECB criticize last?"}})
        assert out["answers"] == ["Romania"] and out["mode"] == "planner" and out["tool_calls"] == 2
        # one thread, two questions, through the SDK: the second run gets its own answer
        from langgraph_sdk import get_sync_client

        client = get_sync_client(url=base)
        assistant = client.assistants.search(graph_id="temptool")[0]["assistant_id"]
        schemas = client.assistants.get_schemas(assistant)
        assert "index_dir" in schemas["context_schema"]["properties"]  # the settings Studio shows
        thread = client.threads.create()
        first = client.runs.wait(thread["thread_id"], "temptool",
                                 input={"question": "Before Germany, who did the ECB criticize last?"})
        second = client.runs.wait(thread["thread_id"], "temptool",
                                  input={"messages": [{"type": "human",
                                                       "content": "Who criticized the European Central Bank first?"}]},
                                  context={"max_tool_calls": 4})
        assert first["answers"] == ["Romania"] and second["answers"][0] == "France"
        assert second["tool_calls"] == 1 and second["stopped"] is None
        state = client.threads.get_state(thread["thread_id"])
        assert [m["content"] for m in state["values"]["messages"] if m["type"] == "human"] == [
            "Before Germany, who did the ECB criticize last?", "Who criticized the European Central Bank first?"]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
    assert proc.returncode is not None
