"""Every LangGraph graph on PostgresSaver / AsyncPostgresSaver, on a real embedded PostgreSQL.

Two questions on one thread, the thread's history, and resuming an interrupted run in a
new process (the checkpoint is all that survives).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import pytest
from langchain_core.messages import HumanMessage

pytestmark = pytest.mark.slow

pg = pytest.importorskip("langgraph.checkpoint.postgres", reason="the postgres extra is not installed")

Q = "Before Germany, who did the ECB criticize last?"
Q2 = "Who criticized the European Central Bank first?"


@pytest.fixture(scope="module")
def saver(pg_url):
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(pg_url) as s:
        s.setup()
        yield s


def _humans(state) -> list[str]:
    return [m.content for m in state.values["messages"] if m.type == "human"]


def test_temptool_two_questions_history(saver, ecb_index):
    from chronorag.workflows.temptool.graph import build_graph

    g = build_graph(str(ecb_index.path), protocol="planner", checkpointer=saver)
    cfg = {"configurable": {"thread_id": "temptool-1"}}
    first = g.invoke({"question": Q}, cfg)
    second = g.invoke({"question": Q2}, cfg)
    assert first["answers"] == ["Romania"] and second["answers"][0] == "France"
    assert _humans(g.get_state(cfg)) == [Q, Q2]
    history = list(g.get_state_history(cfg))
    # newest first; the oldest checkpoint is the empty input of the first run
    assert len(history) >= 6 and history[-1].values.get("messages") in (None, [])
    assert any(h.values.get("answers") == ["Romania"] for h in history)
    # a fresh saver on the same database sees the same thread (nothing is kept in process)
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(saver.conn.info.dsn) as other:
        g2 = build_graph(str(ecb_index.path), protocol="planner", checkpointer=other)
        assert _humans(g2.get_state(cfg)) == [Q, Q2]


def test_dense_qa_two_questions(saver, sample_index):
    from chronorag.integrations.llm import LLMConfig
    from chronorag.workflows.dense_qa.graph import build_graph

    g = build_graph(str(sample_index.path), llm=LLMConfig(base_url=None), checkpointer=saver)
    cfg = {"configurable": {"thread_id": "dense-1"}}
    a = g.invoke({"question": "Who did Xi Jinping host a visit from?"}, cfg)
    b = g.invoke({"messages": [HumanMessage("Who did Barack Obama criticize?")]}, cfg)
    assert a["evidence"] != b["evidence"] and any("Obama" in e for e in b["evidence"])
    assert sum(m.type == "ai" for m in g.get_state(cfg).values["messages"]) == 2
    assert len(list(g.get_state_history(cfg))) >= 6


def test_topg_and_kg_irag_on_postgres(saver, tmp_path, minilm):
    import csv

    import test_kg_irag as K  # fixtures' data, shared with the KG-iRAG tests

    from chronorag.workflows.kg_irag.graph import build_graph as build_kg
    from chronorag.workflows.kg_irag.record_kg import read_records_csv
    from chronorag.workflows.topg.graph import build_graph as build_topg
    from chronorag.workflows.topg.index import build_topg_index, read_corpus
    p = tmp_path / "sensors.csv"
    with open(p, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["timestamp", "station", "rain_mm", "wind"])
        w.writeheader()
        w.writerows(K._rows())
    kg = read_records_csv(p, K.SPEC)
    g = build_kg(kg=kg, source="fixture", checkpointer=saver)
    cfg = {"configurable": {"thread_id": "kg-irag-1"}}
    q1 = "Can I spend 2 hours at A starting 2013-05-01 10:00 without running into rain?"
    q2 = "Can I spend 2 hours at C starting 2013-05-01 10:00 without running into rain?"
    assert g.invoke({"question": q1}, cfg)["answer"] == "no"
    assert g.invoke({"question": q2}, cfg)["answer"] == "yes"
    assert [type(m).__name__ for m in g.get_state(cfg).values["messages"]] == ["HumanMessage", "AIMessage"] * 2

    from pathlib import Path
    corpus = Path(__file__).parent / "fixtures" / "topg_corpus.json"
    build_topg_index(read_corpus(corpus), tmp_path / "topg", encoder=minilm, progress=False)
    gr = build_topg(mode="local", index_dir=str(tmp_path / "topg"), checkpointer=saver)
    cfg = {"configurable": {"thread_id": "topg-1"}}
    a = gr.invoke({"question": "Where was the director of the film Blue Harbor born?"}, cfg)
    b = gr.invoke({"messages": [HumanMessage("Who founded Nordic Pictures and where?")]}, cfg)
    assert b["passage_ids"][0] == 8 and a["passage_ids"][0] != 8
    assert len(list(gr.get_state_history(cfg))) >= 6


_FIRST_PROCESS = textwrap.dedent("""
    import json, sys
    from langgraph.checkpoint.postgres import PostgresSaver
    from chronorag.workflows.temptool.graph import build_graph
    url, index_dir, thread = sys.argv[1:4]
    with PostgresSaver.from_conn_string(url) as saver:
        g = build_graph(index_dir, protocol="planner", checkpointer=saver)
        cfg = {"configurable": {"thread_id": thread}}
        out = g.invoke({"question": sys.argv[4]}, cfg, interrupt_before=["tools"])
        print(json.dumps({"next": list(g.get_state(cfg).next), "answers": out.get("answers")}))
""")


def test_resume_after_process_restart(pg_url, ecb_index):
    """A first process stops before the tool node and exits; this process resumes the run."""
    from langgraph.checkpoint.postgres import PostgresSaver

    from chronorag.workflows.temptool.graph import build_graph

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", _FIRST_PROCESS, pg_url, str(ecb_index.path), "restart-1", Q],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    first = json.loads(done.stdout.strip().splitlines()[-1])
    assert first["next"] == ["tools"] and not first["answers"]
    with PostgresSaver.from_conn_string(pg_url) as saver:
        g = build_graph(str(ecb_index.path), protocol="planner", checkpointer=saver)
        cfg = {"configurable": {"thread_id": "restart-1"}}
        assert g.get_state(cfg).next == ("tools",)
        out = g.invoke(None, cfg)  # resume from the checkpoint
        assert out["answers"] == ["Romania"]
        assert _humans(g.get_state(cfg)) == [Q]


def test_async_saver(pg_url, ecb_index):
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from chronorag.workflows.temptool.graph import build_graph

    async def main():
        async with AsyncPostgresSaver.from_conn_string(pg_url) as s:
            await s.setup()
            g = build_graph(str(ecb_index.path), protocol="planner", checkpointer=s)
            cfg = {"configurable": {"thread_id": "async-1"}}
            a = await g.ainvoke({"question": Q}, cfg)
            b = await g.ainvoke({"question": Q2}, cfg)
            state = await g.aget_state(cfg)
            return a, b, state

    a, b, state = asyncio.run(main())
    assert a["answers"] == ["Romania"] and b["answers"][0] == "France"
    assert _humans(state) == [Q, Q2]
