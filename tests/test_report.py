"""`chronorag report`: two small runs rendered side by side."""

from __future__ import annotations

import json
import re

import pytest

from chronorag.cli import main
from chronorag.evaluation import Prediction, run_eval
from chronorag.evaluation.report import build_report, highlight_dates

QUESTIONS = [
    {"quid": 1, "question": "Who did Obama criticize after France?", "answers": ["China"], "qtype": "after_first"},
    {"quid": 2, "question": "When did Xi Jinping first visit France?", "answers": ["2014-03"], "qtype": "first_last"},
    {"quid": 3, "question": "Who consulted Iran in 2014?", "answers": ["Catherine Ashton"], "qtype": "equal"},
]


def _runs(tmp_path):
    def dense(q):
        return Prediction(answers=["France", "China"], evidence=["On 2014-06-05, Barack Obama criticized France."])

    def tools(q):
        if q["quid"] == 3:
            raise RuntimeError("tool server down")
        ans = {1: "China", 2: "2014-03-26"}[q["quid"]]
        return Prediction(answers=[ans], evidence=[f"On 2014-07-09, Barack Obama criticized <b>{ans}</b>."],
                          trace=[{"name": "Get_time", "args": {}}])

    paths = []
    for name, m in (("dense", dense), ("tools", tools)):
        p = tmp_path / f"{name}.jsonl"
        run_eval(m, QUESTIONS, out_path=p, progress=False, config={"dataset": "multitq", "method": name})
        paths.append(p)
    return paths


def test_report_for_two_runs(tmp_path, capsys):
    runs = _runs(tmp_path)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    (mine / "index.html").write_text("my page")
    assert main(["report", *map(str, runs), "--out", str(mine)]) == 2  # a directory it did not write
    assert "did not write it" in capsys.readouterr().err
    assert sorted(p.name for p in mine.iterdir()) == ["index.html", "notes.txt"]
    assert (mine / "index.html").read_text() == "my page"
    out = tmp_path / "report"
    assert main(["report", *map(str, runs), "--out", str(out)]) == 0
    assert main(["report", *map(str, runs), "--out", str(out)]) == 0  # its own directory: replaced
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    page = out / "index.html"
    assert summary["report"] == str(page) and len(summary["figures"]) == 3
    assert not [p for p in out.iterdir() if p.name.endswith((".partial", ".tmp"))]
    for png in ("metrics_by_qtype.png", "latency.png", "context_tokens.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000
    text = page.read_text()
    # self-contained: the figures are embedded, nothing is fetched
    assert text.count("data:image/png;base64,") == 3 and "http://" not in text and "https://" not in text
    assert "<th>dense</th>" in text and "<th>tools</th>" in text
    assert "tool server down" in text and "<mark>2014-06-05</mark>" in text
    assert "&lt;b&gt;China&lt;/b&gt;" in text  # evidence is escaped, never injected
    # q1 and q2: tools hit (2014-03-26 is in the gold month 2014-03), dense misses; q3: both miss
    rows = re.findall(r"<tr( class=disagree)? data-miss='([^']*)'>", text)
    assert rows == [(" class=disagree", "m0"), (" class=disagree", "m0"), ("", "m0 m1")]
    assert "2 of 3 questions get a hit from some runs" in text


def test_report_errors_and_helpers(tmp_path, capsys):
    runs = _runs(tmp_path)
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["report", str(runs[0]), "--out", str(f)]) == 2
    assert "is a file" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"record": "run"}\n')
    assert main(["report", str(bad), "--out", str(tmp_path / "r")]) == 2
    assert "holds no question records" in capsys.readouterr().err
    assert highlight_dates("On 12 March 2019 & in 2020-05: x<y") == \
        "On <mark>12 March 2019</mark> &amp; in <mark>2020-05</mark>: x&lt;y"
    # a run killed before its summary line still renders
    lines = runs[1].read_text().splitlines()[:-1]
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(lines) + "\n")
    page = build_report([runs[0], partial], tmp_path / "r2")
    assert "was interrupted" in page.read_text()
    with pytest.raises(ValueError, match="at least one"):
        build_report([], tmp_path / "r3")
