"""`chronorag eval`: crash-safe run files, error rows, output-path safety, run-file contents, the judge."""

from __future__ import annotations

import json
import os
import tempfile
import threading

import pytest

from chronorag.cli import main
from chronorag.errors import LLMError
from chronorag.evaluation import METHODS, Prediction, run_eval
from chronorag.evaluation.runfile import load_run
from chronorag.integrations.llm import LLMConfig, record_fallback
from chronorag.integrations.testing import ScriptedOpenAIServer

QUESTIONS = [
    {"quid": 1, "question": "Who did A criticize in Paris?", "answers": ["Paris"], "qtype": "equal"},
    {"quid": 2, "question": "boom", "answers": ["x"], "qtype": "equal"},
    {"quid": 3, "question": "When did B visit Rome?", "answers": ["Rome"], "qtype": "first_last"},
]


def _method(q):
    """A stand-in method: answers the last word, fails like an LLM 500 on 'boom'."""
    if q["question"] == "boom":
        raise LLMError("LLM call to http://127.0.0.1:9/v1 failed: Error code: 500")
    last = q["question"].rstrip("?").split()[-1]
    return Prediction(answers=[last, "other"], evidence=[f"On 2014-01-0{q['quid']}, A met {last}."])


def _write_questions(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _idx(tmp_path):
    d = tmp_path / "idx"
    d.mkdir(exist_ok=True)
    return d


@pytest.fixture()
def fake_method(monkeypatch):
    monkeypatch.setitem(METHODS, "fake", lambda index_dir, **kw: _method)
    return "fake"


def test_failed_question_becomes_error_row_and_run_carries_on(tmp_path):
    out = tmp_path / "run.jsonl"
    m = run_eval(_method, QUESTIONS, out_path=out, progress=False, config={"method": "fake"})
    assert m["n"] == 3 and m["errors"] == 1 and m["hits@1"] == round(2 / 3, 4)
    assert m["by_qtype"]["equal"]["errors"] == 1 and m["by_qtype"]["first_last"]["errors"] == 0
    run, rows = load_run(out)
    assert [r["quid"] for r in rows] == [1, 2, 3]
    assert rows[1]["error"].startswith("LLMError: ") and "500" in rows[1]["error"]
    assert rows[1]["predicted"] == [] and rows[1]["hits@1"] == 0.0
    assert rows[0]["error"] is None and rows[2]["hits@1"] == 1.0
    assert run["metrics"]["errors"] == 1 and run["config"]["method"] == "fake"
    assert run["format"] == "chronorag-run/1" and run["versions"]["chronorag"]
    # the run line is last, so readers that index question rows from the top still work
    assert json.loads(out.read_text().splitlines()[-1])["record"] == "run"


def test_empty_question_is_an_error_row_from_the_cli(tmp_path, capsys, fake_method):
    qs = _write_questions(tmp_path / "q.jsonl", [QUESTIONS[0], {"quid": 9, "question": "  ", "answers": ["y"]},
                                                 QUESTIONS[2]])
    out = tmp_path / "run.jsonl"
    assert main(["-q", "eval", "jsonl", str(_idx(tmp_path)), str(qs), "--method", "fake", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    metrics = json.loads(captured.out.strip().splitlines()[-1])
    assert metrics["errors"] == 1 and metrics["n"] == 3 and metrics["hits@1"] == round(2 / 3, 4)
    assert "1 of 3 questions failed" in captured.err
    _, rows = load_run(out)
    assert rows[1]["error"] == "ConfigError: the question is empty"  # a ChronoRAGError (session 35)


def test_out_is_untouched_until_the_run_ends_and_a_crash_keeps_partial_rows(tmp_path):
    out = tmp_path / "run.jsonl"
    out.write_text("previous results\n")
    seen = []

    def method(q):
        # while the run is going, the destination still holds the previous file and the
        # finished questions are already on disk in the partial file
        partial = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
        seen.append((out.read_text(), sum(len(p.read_text().splitlines()) for p in partial)))
        if q["quid"] == 3:
            raise KeyboardInterrupt  # a kill in the middle of the run
        return _method(q)

    with pytest.raises(KeyboardInterrupt) as info:
        run_eval(method, QUESTIONS, out_path=out, progress=False)
    assert seen == [("previous results\n", 0), ("previous results\n", 1), ("previous results\n", 2)]
    assert out.read_text() == "previous results\n"
    partial = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert len(partial) == 1 and partial[0].name.startswith(".run.jsonl.")
    assert any(str(partial[0]) in n for n in info.value.__notes__)
    assert [json.loads(line)["quid"] for line in partial[0].read_text().splitlines()] == [1, 2]
    # a run that fails before any question leaves no partial file behind
    with pytest.raises(ValueError, match="ks"):
        run_eval(_method, QUESTIONS, out_path=tmp_path / "other.jsonl", ks=(0,), progress=False)
    assert not (tmp_path / "other.jsonl").exists()


def test_interrupted_cli_run_exits_130_and_keeps_previous_file(tmp_path, capsys, monkeypatch):
    def factory(index_dir, **kw):
        def m(q):
            if q["quid"] == 2:
                raise KeyboardInterrupt
            return _method(q)
        return m

    monkeypatch.setitem(METHODS, "dies", factory)
    qs = _write_questions(tmp_path / "q.jsonl", QUESTIONS)
    out = tmp_path / "run.jsonl"
    out.write_text("old\n")
    assert main(["-q", "eval", "jsonl", str(_idx(tmp_path)), str(qs), "--method", "dies", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "was not changed" in err and ".partial" in err
    assert out.read_text() == "old\n"
    monkeypatch.setitem(METHODS, "dies", lambda index_dir, **kw: _method)  # the next run says so
    assert main(["-q", "eval", "jsonl", str(_idx(tmp_path)), str(qs), "--method", "dies", "--out", str(out)]) == 0
    assert "1 partial file(s) from interrupted or concurrent runs" in capsys.readouterr().err
    assert len(load_run(out)[1]) == 3


def test_out_equal_to_an_input_is_refused(tmp_path, capsys, fake_method):
    qs = _write_questions(tmp_path / "q.jsonl", QUESTIONS)
    before = qs.read_text()
    idx = tmp_path / "idx"
    idx.mkdir()
    assert main(["-q", "eval", "jsonl", str(idx), str(qs), "--method", "fake", "--out", str(qs)]) == 2
    assert "is the input file" in capsys.readouterr().err and qs.read_text() == before
    link = tmp_path / "link.jsonl"
    link.symlink_to(qs)  # the same file under another name
    assert main(["-q", "eval", "jsonl", str(idx), str(qs), "--method", "fake", "--out", str(link)]) == 2
    assert "is the input file" in capsys.readouterr().err and qs.read_text() == before
    assert main(["-q", "eval", "jsonl", str(idx), str(qs), "--method", "fake", "--out", str(idx / "p.jsonl")]) == 2
    assert "inside the index directory" in capsys.readouterr().err
    assert main(["-q", "eval", "jsonl", str(idx), str(qs), "--method", "fake", "--out", str(idx)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["-q", "eval", "jsonl", str(idx), str(qs), "--method", "fake", "--out",
                 str(tmp_path / "nope" / "p.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err
    if os.geteuid() != 0:  # root may write anywhere
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        assert main(["-q", "eval", "jsonl", str(idx), str(qs), "--method", "fake", "--out", str(ro / "p.jsonl")]) == 2
        assert "permission denied" in capsys.readouterr().err


def test_default_output_is_unique_and_never_follows_a_symlink(tmp_path, capsys, fake_method, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    # the old, predictable default name, planted as a symlink by someone else
    (tmp_path / "chronorag-jsonl-fake.jsonl").symlink_to(victim)
    qs = _write_questions(tmp_path / "q.jsonl", QUESTIONS)
    paths = []
    for _ in range(2):
        assert main(["-q", "eval", "jsonl", str(_idx(tmp_path)), str(qs), "--method", "fake"]) == 0
        paths.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["predictions"])
    assert paths[0] != paths[1]
    assert victim.read_text() == "precious"
    for p in paths:
        assert not os.path.islink(p) and os.path.dirname(p) == str(tmp_path)
        assert len(load_run(p)[1]) == 3


def test_concurrent_runs_to_one_file_never_mix(tmp_path):
    out = tmp_path / "run.jsonl"
    errors = []

    def go(tag):
        def m(q):
            return Prediction(answers=[tag], evidence=[tag])
        try:
            run_eval(m, QUESTIONS * 20, out_path=out, progress=False, config={"tag": tag})
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(t,)) for t in ("A", "B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    run, rows = load_run(out)
    assert len(rows) == 60 and {r["predicted"][0] for r in rows} == {run["config"]["tag"]}
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_run_file_records_tokens_fallbacks_timings_and_context(tmp_path):
    with ScriptedOpenAIServer(["<think>hmm</think>Paris", "Rome"]) as srv:
        cfg = LLMConfig(base_url=srv.base_url, max_retries=0)
        from chronorag.integrations.llm import resolve_llm

        chat = resolve_llm(cfg)

        def method(q):
            text = chat.complete([{"role": "user", "content": q["question"]}])
            if q["quid"] == 1:
                record_fallback("test.substitute", "used a substitute")
            return Prediction(answers=[text], evidence=["On 2014-01-01, A met Paris in the capital."])

        method.ledger = cfg.ledger
        m = run_eval(method, [QUESTIONS[0], QUESTIONS[2]], out_path=tmp_path / "r.jsonl", progress=False)
    _, rows = load_run(tmp_path / "r.jsonl")
    assert rows[0]["predicted"] == ["Paris"] and rows[0]["hits@1"] == 1.0
    assert rows[0]["tokens"]["calls"] == 1 and rows[0]["tokens"]["prompt_tokens"] == 6
    assert rows[0]["fallbacks"] == {"test.substitute": 1} and rows[1]["fallbacks"] == {}
    assert rows[0]["fallback_details"] == [["test.substitute", "used a substitute"]]
    assert "fallback_details" not in rows[1]
    assert rows[0]["context_tokens"] > 5 and rows[0]["latency_ms"] > 0
    assert m["fallbacks"] == 1 and m["llm_tokens"] == sum(r["tokens"]["total_tokens"] for r in rows)


def _judge_reply(verdict):
    return json.dumps({"verdict": verdict})


def test_judge_majority_of_three_with_reasoning_and_failures():
    from chronorag.evaluation.judge import MajorityJudge

    replies = [
        "<think>The numbers agree.</think>" + _judge_reply("CORRECT"),  # q1: C, I, C -> correct
        _judge_reply("INCORRECT"),
        "<think>close enough</think>\n" + _judge_reply("CORRECT"),
        _judge_reply("INCORRECT"), "no idea", "still no idea", _judge_reply("INCORRECT"),  # q2: I, fail, I
    ] + ["???"] * 6  # q3: every call unparseable twice -> judge failure
    with ScriptedOpenAIServer(replies) as srv:
        judge = MajorityJudge(LLMConfig(base_url=srv.base_url, max_retries=0))
        v1 = judge("Deliveries in 2022?", "1,614,231", "1,614,231 cars")
        v2 = judge("Deliveries in 2022?", "1,614,231", "1.8 million")
        v3 = judge("Deliveries in 2022?", "1,614,231", "about that")
        fmt = srv.requests[0]["response_format"]
    assert (v1.correct, v1.votes) == (True, [True, False, True])
    assert (v2.correct, v2.votes, v2.failed_calls) == (False, [False, False], 1)
    assert v3.correct is None and v3.failed_calls == 3 and "???" in v3.error
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["properties"]["verdict"]["enum"] == [
        "CORRECT", "INCORRECT"]
    assert MajorityJudge(LLMConfig(base_url="http://127.0.0.1:9/v1"))("q", "g", "").correct is False
    with pytest.raises(ValueError, match="odd"):
        MajorityJudge(LLMConfig(base_url="http://127.0.0.1:9/v1"), votes=2)


def test_eval_judge_from_the_cli(tmp_path, capsys, fake_method):
    qs = _write_questions(tmp_path / "q.jsonl", [QUESTIONS[0], QUESTIONS[2]])
    assert main(["-q", "eval", "jsonl", str(_idx(tmp_path)), str(qs), "--method", "fake", "--judge"]) == 2
    assert "--judge needs an LLM" in capsys.readouterr().err
    replies = [_judge_reply("CORRECT")] * 3 + ["x"] * 6  # q1 judged correct, q3: judge failure
    out = tmp_path / "run.jsonl"
    with ScriptedOpenAIServer(replies) as srv:
        url = srv.base_url
        os.environ["CHRONORAG_MAX_RETRIES"] = "0"
        try:
            assert main(["-q", "eval", "jsonl", str(_idx(tmp_path)), str(qs), "--method", "fake", "--judge",
                         "--llm-url", srv.base_url, "--out", str(out)]) == 0
        finally:
            del os.environ["CHRONORAG_MAX_RETRIES"]
    stdout = capsys.readouterr().out
    metrics = json.loads(stdout.strip().splitlines()[-1])
    assert metrics["judge_acc"] == 1.0 and metrics["judge_failures"] == 1 and metrics["hits@1"] == 1.0
    assert "judge_acc" in stdout.splitlines()[0]
    run, rows = load_run(out)
    assert rows[0]["judge"]["votes"] == [True, True, True] and rows[1]["judge"]["correct"] is None
    assert run["config"]["judge"].startswith("majority-of-3") and run["config"]["llm_url"] == url
    assert rows[1]["fallbacks"] == {"judge.failed_call": 3}


# ---------------------------------------------------------------------------
# RAGAS
# ---------------------------------------------------------------------------

GOOD = {"quid": 1, "question": "Who did Obama criticize after France?", "answers": ["China"],
        "predicted": ["China"], "evidence": ["On 2014-07-09, Barack Obama criticized or denounced China."],
        "gold_evidence": ["On 2014-07-09, Barack Obama criticized or denounced China."]}


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("bad, message", [
    ({"predicted": "Thailand"}, r"p.jsonl:2: field 'predicted' must be a list of strings, got the string 'Thailand'"),
    ({"answers": "Thailand"}, r"p.jsonl:2: field 'answers' must be a list of strings"),
    ({"answers": None, "predicted": None}, r"p.jsonl:2: field 'answers' is null"),
    ({"evidence": None}, r"p.jsonl:2: field 'evidence' is null.*use \[\]"),
    ({"predicted": [None]}, r"p.jsonl:2: field 'predicted' must hold only strings"),
    ({"question": ""}, r"p.jsonl:2: field 'question' must be a non-empty string"),
    ({"gold_evidence": "x"}, r"p.jsonl:2: field 'gold_evidence' must be a list"),
])
def test_ragas_rejects_bad_field_types_with_line_numbers(tmp_path, capsys, bad, message):
    from chronorag.errors import DataFormatError
    from chronorag.evaluation.ragas import load_predictions

    preds = _jsonl(tmp_path / "p.jsonl", [GOOD, {**GOOD, **bad}])
    with pytest.raises(DataFormatError, match=message):
        load_predictions(preds)
    assert main(["-q", "ragas", str(preds)]) == 2
    assert "p.jsonl:2" in capsys.readouterr().err


def test_ragas_missing_field_and_skipped_rows(tmp_path, capsys):
    from chronorag.errors import DataFormatError
    from chronorag.evaluation.ragas import load_predictions

    no_pred = {k: v for k, v in GOOD.items() if k != "predicted"}
    with pytest.raises(DataFormatError, match=r"p.jsonl:1: missing field 'predicted'"):
        load_predictions(_jsonl(tmp_path / "p.jsonl", [no_pred]))
    error_row = {**GOOD, "quid": 2, "predicted": [], "evidence": [], "error": "LLMError: 500"}
    rows = load_predictions(_jsonl(tmp_path / "p.jsonl", [GOOD, error_row, {"record": "run", "metrics": {}}]))
    assert [r["quid"] for r in rows] == [1]
    with pytest.raises(DataFormatError, match="no scorable predictions"):
        load_predictions(_jsonl(tmp_path / "p.jsonl", [error_row]))
    assert main(["-q", "ragas", str(_jsonl(tmp_path / "p.jsonl", [GOOD, error_row]))]) == 0
    assert json.loads(capsys.readouterr().out)["skipped_error_rows"] == 1


def test_temporal_context_metric_does_not_credit_the_wrong_date_or_entity():
    from chronorag.evaluation.ragas import context_supports, ragas_scores

    gold = "On 2014-07-09, Barack Obama criticized or denounced China."
    wrong_date = "On 2014-06-05, Barack Obama criticized or denounced China."
    wrong_both = "On 2014-06-05, Barack Obama criticized or denounced France."
    scores = ragas_scores([{**GOOD, "evidence": [wrong_both], "gold_evidence": [gold]}])
    assert scores["non_llm_context_recall"] == 1.0  # RAGAS's string metric is fooled
    assert scores["temporal_context_recall"] == 0.0 and scores["temporal_context_precision"] == 0.0
    assert not context_supports(wrong_date, gold)
    assert not context_supports("On 2014-07-09, Barack Obama criticized or denounced Japan.", gold)
    assert context_supports("On 2014-07-09, Barack Obama criticized or denounced China (Xinhua).", gold)
    # granularity: a gold year is met by a day in it; a gold day is not met by its year
    assert context_supports("In March 2019 Audi delivered 1,802,073 cars.", "Audi delivered 1,802,073 cars in 2019.")
    assert not context_supports("Audi delivered 1,802,073 cars in 2019.", "On 12 March 2019 Audi delivered 1,802,073 cars.")
    assert not context_supports("Audi delivered 1,614,231 cars in 2019.", "Audi delivered 1,802,073 cars in 2019.")
    # rank-aware precision: the supporting context second of two
    s = ragas_scores([{**GOOD, "evidence": [wrong_both, gold]}])
    assert s["temporal_context_recall"] == 1.0 and s["temporal_context_precision"] == 0.5


def test_temporal_metrics_are_ragas_metrics_and_nodes_become_a_dataset():
    from llama_index.core.schema import NodeWithScore, TextNode
    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics.base import SingleTurnMetric

    from chronorag.evaluation.ragas import (
        TemporalContextPrecision,
        TemporalContextRecall,
        nodes_to_ragas_dataset,
    )

    gold = GOOD["gold_evidence"][0]
    nodes = [NodeWithScore(node=TextNode(text="On 2014-06-05, Barack Obama criticized or denounced France."), score=0.9),
             NodeWithScore(node=TextNode(text=gold), score=0.8)]
    ds = nodes_to_ragas_dataset([GOOD["question"]], [nodes], responses=["China"], references=["China"],
                                reference_contexts=[[gold]])
    sample = ds.samples[0]
    assert sample.retrieved_contexts == [n.node.get_content() for n in nodes] and sample.reference == "China"
    recall, precision = TemporalContextRecall(), TemporalContextPrecision()
    assert isinstance(recall, SingleTurnMetric)
    assert recall.single_turn_score(sample) == 1.0 and precision.single_turn_score(sample) == 0.5
    assert recall.single_turn_score(SingleTurnSample(retrieved_contexts=[nodes[0].node.get_content()],
                                                     reference_contexts=[gold])) == 0.0
    from chronorag.evaluation.ragas import temporal_collection_metrics

    rec2, prec2 = temporal_collection_metrics()  # RAGAS's collections API
    assert rec2.score(retrieved_contexts=sample.retrieved_contexts, reference_contexts=[gold]).value == 1.0
    assert prec2.score(retrieved_contexts=sample.retrieved_contexts, reference_contexts=[gold]).value == 0.5
    with pytest.raises(ValueError, match="2 items for 1 questions"):
        nodes_to_ragas_dataset(["q"], [nodes, nodes])
    with pytest.raises(TypeError, match="not a NodeWithScore"):
        nodes_to_ragas_dataset(["q"], [["plain string"]])


def _ragas_llm_reply(req):
    p = req["messages"][-1]["content"]
    if "Break down each sentence" in p:
        return '<think>one statement</think>{"statements": ["Audi delivered 1,614,231 cars in 2022."]}'
    if "judge the faithfulness" in p:
        return json.dumps({"statements": [{"statement": "Audi delivered 1,614,231 cars in 2022.",
                                           "reason": "stated in the context", "verdict": 1}]})
    if "TP (true positive)" in p:
        return json.dumps({"TP": [{"statement": "Audi delivered 1,614,231 cars in 2022.", "reason": "same"}],
                           "FP": [], "FN": []})
    if "context was useful" in p:
        return "<think>yes</think>" + json.dumps({"reason": "it gives the number", "verdict": 1})
    return "unexpected prompt"


def test_ragas_llm_metrics_through_the_openai_protocol(tmp_path, capsys):
    passage = "In 2022, Audi delivered 1,614,231 cars to customers worldwide."
    rec = {"quid": 1, "question": "How many cars did Audi deliver in 2022?", "answers": ["1,614,231"],
           "predicted": ["Audi delivered 1,614,231 cars in 2022."], "evidence": [passage], "gold_evidence": [passage]}
    preds = _jsonl(tmp_path / "p.jsonl", [rec])
    with ScriptedOpenAIServer([_ragas_llm_reply] * 20) as srv:
        assert main(["-q", "ragas", str(preds), "--llm-url", srv.base_url]) == 0
        n_embed = sum(1 for r in srv.requests if "input" in r)
        chat_reqs = [r for r in srv.requests if "messages" in r]
    scores = json.loads(capsys.readouterr().out)
    assert scores["faithfulness"] == 1.0 and scores["llm_context_precision_with_reference"] == 1.0
    # answer correctness = 0.75 * statement F1 (1.0 here) + 0.25 * embedding similarity
    assert 0.5 <= scores["answer_correctness"] <= 1.0
    assert scores["temporal_context_recall"] == 1.0 and "answer_correctness_failed" not in scores
    assert n_embed >= 1 and len(chat_reqs) >= 4  # the embeddings came from the same server


def test_tool_call_accuracy_strict_order(tmp_path, capsys):
    from chronorag.errors import DataFormatError
    from chronorag.evaluation.ragas import tool_call_scores

    ref = [{"name": "Get_time", "args": {"head": "A", "rel": "Consult", "tail": "B"}},
           {"name": "Get_tail_entity", "args": {"head": "A", "rel": "Consult", "begin_time": "2014-03"}}]
    base = {**GOOD, "tool_calls": ref, "reference_tool_calls": ref}
    assert tool_call_scores([base])["tool_call_accuracy"] == 1.0
    swapped = {**base, "tool_calls": ref[::-1]}
    assert tool_call_scores([swapped]) == {"n": 1, "tool_call_accuracy": 0.0, "exact_sequence": 0.0}
    wrong_arg = {**base, "tool_calls": [ref[0], {**ref[1], "args": {**ref[1]["args"], "begin_time": "2014-04"}}]}
    assert tool_call_scores([wrong_arg])["tool_call_accuracy"] == pytest.approx(0.5 * (1 + 2 / 3), abs=1e-4)
    with pytest.raises(DataFormatError, match="no 'reference_tool_calls'"):
        tool_call_scores([{**GOOD, "tool_calls": ref}])
    # references from another file, matched by quid
    preds = _jsonl(tmp_path / "p.jsonl", [{**GOOD, "tool_calls": ref[:1]}])
    refs = _jsonl(tmp_path / "q.jsonl", [{"quid": 1, "question": "x", "answers": ["y"], "reference_tool_calls": ref}])
    assert main(["-q", "ragas", str(preds), "--tool-calls", "--reference", str(refs)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tool_call_accuracy"] == 0.0 and out["exact_sequence"] == 0.0  # a truncated trace is misaligned
    assert main(["-q", "ragas", str(_jsonl(tmp_path / "n.jsonl", [GOOD])), "--tool-calls",
                 "--reference", str(refs)]) == 2
    assert "n.jsonl:1: no 'tool_calls' trace" in capsys.readouterr().err


def test_tools_eval_writes_traces_that_ragas_scores(tmp_path, capsys, ecb_index, monkeypatch):
    from chronorag.workflows.temptool.reasoner import TemporalReasoner
    from chronorag.workflows.temptool.tools import TemporalKGTools

    # the real `tools` adapter over the shared ECB index (one encoder for the whole session)
    factory = METHODS["tools"]
    monkeypatch.setattr("chronorag.graphs.event_index.EventIndex.load", staticmethod(lambda d: ecb_index))
    q = {"quid": 7, "question": "Before Germany, who did the ECB criticize last?", "answers": ["Romania"]}
    qs = _jsonl(tmp_path / "q.jsonl", [q])
    run = tmp_path / "tools.jsonl"
    assert main(["-q", "eval", "multitq", str(_idx(tmp_path)), str(qs), "--method", "tools", "--out", str(run)]) == 0
    capsys.readouterr()
    _, rows = load_run(run)
    assert rows[0]["hits@1"] == 1.0
    trace = rows[0]["tool_calls"]
    expected = TemporalReasoner(TemporalKGTools(ecb_index)).answer(q["question"]).calls
    assert [c["name"] for c in trace] == [c["name"] for c in expected] == ["Get_time", "Get_tail_entity"]
    assert trace[1]["args"]["type"] == "before" and factory is METHODS["tools"]
    # the reasoner's own trace as reference scores 1.0; a reordered reference scores 0.0
    assert main(["-q", "ragas", str(run), "--tool-calls", "--reference", str(run)]) == 0
    assert json.loads(capsys.readouterr().out)["tool_call_accuracy"] == 1.0
    rev = _jsonl(tmp_path / "r.jsonl", [{**q, "reference_tool_calls": trace[::-1]}])
    assert main(["-q", "ragas", str(run), "--tool-calls", "--reference", str(rev)]) == 0
    assert json.loads(capsys.readouterr().out)["tool_call_accuracy"] == 0.0


def test_tools_agent_run_file_has_trace_and_tokens(tmp_path, ecb_index):
    from chronorag.evaluation import make_method

    args = {"head": "ECB", "rel": "criticize", "begin_time": "-inf", "end_time": "2011-02-14", "type": "before"}
    script = [{"tool_calls": [{"name": "Get_tail_entity", "arguments": args}]}, "Romania",
              "not a tool call and not an answer either"]
    q = {"quid": 1, "question": "Before Germany, who did the ECB criticize last?", "answers": ["Romania"]}
    with ScriptedOpenAIServer(script) as srv:
        method = make_method("tools", ecb_index.path, llm_url=srv.base_url)
        m = run_eval(method, [q], out_path=tmp_path / "agent.jsonl", progress=False)
    _, rows = load_run(tmp_path / "agent.jsonl")
    assert m["hits@1"] == 1.0 and rows[0]["predicted"] == ["Romania"]
    assert rows[0]["tool_calls"] == [{"name": "Get_tail_entity", "args": args}]
    assert rows[0]["tokens"]["calls"] == 2 and rows[0]["tokens"]["prompt_tokens"] > 0


def test_kill_9_mid_run_keeps_previous_output_and_finished_rows(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run.jsonl"
    out.write_text("previous results\n")
    script = f"""
import time
from chronorag.evaluation import Prediction, run_eval
def m(q):
    if q["quid"] >= 3:
        time.sleep(60)
    return Prediction(answers=["x"], evidence=[])
qs = [{{"quid": i, "question": f"q{{i}}?", "answers": ["x"]}} for i in range(1, 6)]
run_eval(m, qs, out_path={str(out)!r}, progress=False)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            partial = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
            if partial and len(partial[0].read_text().splitlines()) == 2:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert out.read_text() == "previous results\n"
    partial = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert [json.loads(line)["quid"] for line in partial[0].read_text().splitlines()] == [1, 2]


def test_an_error_row_keeps_the_tokens_the_question_spent(tmp_path, ecb_index):
    """A question whose LLM call fails after earlier calls succeeded becomes an error row that
    still says what it cost (every LLM adapter exposes its ledger to the runner)."""
    from chronorag.evaluation import make_method

    args = {"head": "ECB", "rel": "criticize", "begin_time": "-inf", "end_time": "2011-02-14", "type": "before"}
    boom = {"status": 500, "body": {"error": {"message": "the server died"}}}
    script = [{"tool_calls": [{"name": "Get_tail_entity", "arguments": args}]}] + [boom] * 6
    q = {"quid": 1, "question": "Before Germany, who did the ECB criticize last?", "answers": ["Romania"]}
    with ScriptedOpenAIServer(script) as srv:
        method = make_method("tools", ecb_index.path, llm_url=srv.base_url)
        m = run_eval(method, [q], out_path=tmp_path / "agent.jsonl", progress=False)
    _, rows = load_run(tmp_path / "agent.jsonl")
    assert m["errors"] == 1 and "the server died" in rows[0]["error"]
    tok = rows[0]["tokens"]
    assert tok["prompt_tokens"] > 0 and tok["failed_calls"] >= 1 and tok["calls"] == 1 + tok["failed_calls"]


def test_ledger_summary_since_refuses_a_bad_start():
    from chronorag.integrations.llm import TokenLedger

    led = TokenLedger()
    assert led.summary_since(0)["calls"] == 0
    for bad in (-1, 1.5, True, "0"):
        with pytest.raises(ValueError, match="start must be a record count"):
            led.summary_since(bad)
