"""T-GRAG on questions about annual reports worded as users type them: is the time read right?

Each question carries the periods a careful reader would retrieve ("before 2014" over reports of
2012-2023: 2012 and 2013) or ``abstain`` (no report covers the time asked, a time relative to now,
a comparison of periods the extractive reader cannot make). The wording is this file's own, not
Time-LongQA's. Scoring, per question, over the no-LLM answer (``answer_tgrag`` without an LLM):

- *ok*: the expected periods were retrieved and the reader did not refuse them as unreadable, or
  the reader abstained where it should;
- *wrong*: other periods were read (e.g. "before 2014" as the 2014 report), or an answer was given
  where none can be certified;
- *refused*: an answerable question refused as unreadable.

    chronorag -q tgrag index ../shared/data/time-longqa/audi_md --out AUDI --encoder static
    python benchmarks/tgrag_free_wording.py AUDI
    # the 59 questions a review helper wrote without reading this code or these questions
    python benchmarks/tgrag_free_wording.py AUDI --questions benchmarks/specs/tgrag_heldout_questions.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys

QUESTIONS = [
    {'question': 'How many cars did Audi deliver in 2019 and 2022?', 'periods': ['2019', '2022']},
    {'question': 'audi deliveries 2019 vs 2022', 'periods': ['2019', '2022']},
    {'question': 'How many cars did Audi deliver between 2015 and 2017?', 'periods': ['2015', '2016', '2017']},
    {'question': 'How many cars did Audi deliver from 2015 to 2017?', 'periods': ['2015', '2016', '2017']},
    {'question': 'How many vehicles did Audi deliver before 2014?', 'periods': ['2012', '2013']},
    {'question': 'how many cars did audi deliver after 2021', 'periods': ['2022', '2023']},
    {'question': 'How many cars has Audi delivered since 2021?', 'periods': ['2021', '2022', '2023']},
    {'question': 'What did Audi say about electric cars prior to 2013?', 'periods': ['2012']},
    {'question': 'How many employees did Audi have until 2013?', 'periods': ['2012', '2013']},
    {'question': 'How many cars did Audi deliver before 2012?', 'abstain': True},
    {'question': 'How many cars did Audi deliver after 2023?', 'abstain': True},
    {'question': 'How many cars did Audi deliver last year?', 'abstain': True},
    {'question': 'How many cars has Audi delivered recently?', 'abstain': True},
    {'question': "What was Audi's revenue in the past three years?", 'abstain': True},
    {'question': 'Which year did Audi deliver the most cars?', 'abstain': True},
    {'question': "In which year were Audi's deliveries the lowest?", 'abstain': True},
    {'question': 'When did Audi have the highest number of employees?', 'abstain': True},
    {'question': "How have Audi's CO2 emissions changed over the years?", 'abstain': True},
    {'question': 'Did Audi deliver more cars in 2021 than in 2020?', 'abstain': True},
    {'question': "Was Audi's revenue higher in 2019 than in 2018?", 'abstain': True},
    {'question': 'How many cars did Audi deliver in every year except 2020?', 'abstain': True},
    {'question': 'How many cars did Audi deliver in FY2018?', 'periods': ['2018']},
    {'question': 'How many cars did Audi deliver in fiscal 2018?', 'periods': ['2018']},
    {'question': 'How many employees did Audi have at the end of 2016?', 'periods': ['2016']},
    {'question': 'How many employees did Audi have by the end of 2016?', 'periods': ['2016']},
    {'question': "What were Audi's CO2 targets as of 2014?", 'periods': ['2014']},
    {'question': 'How many cars did Audi deliver in 2019, 2020 and 2021?', 'periods': ['2019', '2020', '2021']},
    {'question': "What was Audi's operating profit in 2020?", 'periods': ['2020']},
    {'question': 'How many e-tron cars did Audi deliver in 2021?', 'periods': ['2021']},
    {'question': 'What does Audi say about sustainability?', 'periods': [None]},
    {'question': "Who is the chairman of Audi's board of management?", 'periods': [None]},
    {'question': 'How many cars did Audi deliver in the first half of 2020?', 'periods': ['2020']},
    {'question': "What was Audi's revenue in 2021 compared to 2020?", 'periods': ['2020', '2021']},
    {'question': "How did Audi's deliveries change from 2019 to 2020?", 'periods': ['2019', '2020']},
    {'question': 'how many cars audi sold 2018', 'periods': ['2018']},
    {'question': "How did Audi's CO2 emissions change between 2019 and 2022?", 'periods': ['2019', '2022']},
    {'question': 'Total Audi deliveries between 2016 and 2018?', 'periods': ['2016', '2017', '2018']},
    {'question': 'What did Audi invest in between 2020 and 2021?', 'periods': ['2020', '2021']},
    {'question': 'How much water does Audi currently need to produce one car?', 'periods': [None]},
    {'question': "What was Audi's revenue the previous year?", 'abstain': True}
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("index", help="a T-GRAG index of the Audi reports 2012-2023")
    ap.add_argument("--verbose", action="store_true", help="one line per question")
    ap.add_argument("--questions", default=None,
                    help="a JSONL file of the same form ({'question', 'periods'} or {'question', 'abstain'}) "
                         "instead of this file's questions: a held-out set")
    a = ap.parse_args()
    questions = QUESTIONS
    if a.questions:
        with open(a.questions, encoding="utf-8") as fh:
            questions = [json.loads(line) for line in fh if line.strip()]
    from chronorag.retrievers.tgrag import TGragRetriever, answer_tgrag
    from chronorag.retrievers.tgrag.index import TGragIndex

    retriever = TGragRetriever(TGragIndex.load(a.index))
    counts = {"ok": 0, "wrong": 0, "refused": 0}
    for r in questions:
        out = answer_tgrag(retriever, r["question"])
        got = [s["period"] for s in out["sub_answers"]]
        if r.get("abstain"):
            verdict = "ok" if out["abstained"] else "wrong"
        elif out["abstained"] and out["reason"].startswith(("cannot", "no sub")):
            verdict = "refused"
        else:
            verdict = "ok" if sorted(got, key=str) == sorted(r["periods"], key=str) else "wrong"
        counts[verdict] += 1
        if a.verbose or verdict != "ok":
            print(f"{verdict:8} {r['question'][:70]:70} | read {got} | abstained {out['abstained']} | "
                  f"{out['reason'][:120]}")
    print(json.dumps({"n": len(questions), **counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
