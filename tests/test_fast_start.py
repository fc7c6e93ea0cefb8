"""`chronorag ask` imports only what its method needs (no torch, LlamaIndex or LangGraph for
`tools` and `dense`), and the dense method's direct path returns the retriever's events."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HEAVY = ("torch", "sentence_transformers", "llama_index.core", "langgraph", "langchain_core", "spacy",
         # NLTK's package import pulls scipy.stats and scikit-learn (seconds of CPU); the
         # LLM layer pulls httpx and pydantic-settings: neither is needed without an LLM
         "nltk", "sklearn", "scipy.stats", "httpx", "chronorag.integrations.llm")

PROBE = f"""
import json, sys
from chronorag.cli import main
rc = main(sys.argv[1:])
print(json.dumps({{"rc": rc, "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}), file=sys.stderr)
"""


@pytest.mark.parametrize("method", ["tools", "dense"])
def test_ask_imports_no_heavy_framework(method: str, ecb_index, tmp_path) -> None:
    env = {**os.environ, "CHRONORAG_HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", PROBE, "ask", str(ecb_index.path),
                        "Whom did the European Central Bank criticize in 2012?", "--method", method, "--json"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout)
    assert res["answers"], res
    probe = json.loads(r.stderr.strip().splitlines()[-1])
    assert probe == {"rc": 0, "loaded": []}


def test_dense_method_matches_the_retriever(ecb_index) -> None:
    from chronorag.evaluation import make_method
    from chronorag.retrievers.dense import DenseEventRetriever

    m = make_method("dense", str(ecb_index.path))
    retr = DenseEventRetriever(ecb_index, similarity_top_k=10)
    for q in ("Whom did the European Central Bank criticize in 2012?", "ECB criticism of Ireland"):
        ids, _ = retr.retrieve_event_ids(q)
        assert m({"question": q, "answers": ["?"]}).info["event_ids"] == [int(i) for i in np.asarray(ids)]
