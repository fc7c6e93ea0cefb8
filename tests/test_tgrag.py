import json

import numpy as np
import pytest
from conftest import FIXTURES

from chronorag.integrations.llm import LLMConfig
from chronorag.integrations.testing import ScriptedOpenAIServer
from chronorag.retrievers.tgrag import (
    SubQuestion,
    TGragRetriever,
    VanillaChunkRetriever,
    answer_tgrag,
    decompose_rule_based,
    parse_decomposition,
)
from chronorag.retrievers.tgrag.index import (
    LLMExtractor,
    TGragIndex,
    add_period,
    build_tgrag_index,
    parse_extraction,
    read_period_documents,
)
from chronorag.retrievers.tgrag.timeslice import KnowledgeUnit, PeriodExtraction, TimeSlicedKG

REPORTS = FIXTURES / "reports"


def test_decompose_rule_based():
    assert decompose_rule_based("How many cars in 2019 and 2022?") == [
        SubQuestion("2019", "How many cars in 2019?"), SubQuestion("2022", "How many cars in 2022?")]
    assert [s.period for s in decompose_rule_based("Sales 2019-2021?")] == ["2019", "2020", "2021"]
    assert [s.period for s in decompose_rule_based("Sales 2012, 2015 and 2023?")] == ["2012", "2015", "2023"]
    assert decompose_rule_based("What does Audi make?") == [SubQuestion(None, "What does Audi make?")]
    assert decompose_rule_based("Plans for 2030?", periods=["2019", "2022"]) == [SubQuestion(None, "Plans for 2030?")]
    with pytest.raises(ValueError):
        decompose_rule_based(" ")


def test_open_ranges_and_between_are_the_indexed_years_they_cover():
    """A user's "before 2019" is every indexed year before it, not the 2019 report; "between
    2015 and 2017" is a range unless the question compares the two years (Time-LongQA's "How did X
    change between 2019 and 2022?"); "by the end of 2016" and "as of 2014" stay that year."""
    years = [str(y) for y in range(2012, 2024)]

    def periods(q):
        return [s.period for s in decompose_rule_based(q, years)]

    assert decompose_rule_based("How many cars did Audi deliver before 2014?", years) == [
        SubQuestion("2012", "How many cars did Audi deliver in 2012?"),
        SubQuestion("2013", "How many cars did Audi deliver in 2013?")]
    assert periods("how many cars did audi deliver after 2021") == ["2022", "2023"]
    assert periods("How many cars has Audi delivered since 2021?") == ["2021", "2022", "2023"]
    assert periods("Employees until 2013?") == periods("Employees up to 2013?") == ["2012", "2013"]
    assert periods("What did Audi say prior to 2013?") == ["2012"]
    assert periods("Total deliveries between 2016 and 2018?") == ["2016", "2017", "2018"]
    assert decompose_rule_based("Deliveries between 2016 and 2017?", years)[0].question == "Deliveries in 2016?"
    assert periods("How did CO2 emissions change between 2019 and 2022?") == ["2019", "2022"]
    assert periods("Deliveries in FY2018?") == periods("Deliveries in fiscal 2018?") == ["2018"]
    assert periods("Employees by the end of 2016?") == ["2016"] and periods("Targets as of 2014?") == ["2014"]
    # two years named: "since 2006 up to 2014" is cumulative, as of 2014 (Time-LongQA's wording)
    assert periods("How many check-ups since 2006 up to 2014?") == ["2014"]
    assert periods("Deliveries before 2012?") == []  # nothing in range: nothing retrieved, the answer refuses
    # forms a held-out review found read as the named year, or not as a time at all
    assert periods("audi waste recycling rate post-2020") == ["2021", "2022", "2023"]
    assert periods("from 2020 onwards how many charging points did audi install") == ["2020", "2021", "2022", "2023"]
    assert periods("What was the impact of the talks held in 2019 on suppliers?") == ["2019"]  # "2019 on suppliers"
    assert periods("R&D spending in '19") == periods("FY19 energy use") == ["2019"]
    assert periods("diesel crisis impact between '16 and '18") == ["2016", "2017", "2018"]
    assert periods("audi emissions in the last two reports") == ["2022", "2023"]
    assert periods("what does the latest report say about e-tron production") == ["2023"]
    assert periods("energy use per vehicle in the earliest report") == ["2012"]
    assert periods("How many models did Audi launch in the 2010s?") == [str(y) for y in range(2012, 2020)]


def test_conditions_the_per_period_retrieval_cannot_apply_are_named():
    from chronorag.retrievers.tgrag.decomposition import present_note, unread_conditions

    years = [str(y) for y in range(2012, 2024)]

    def unread(q, **kw):
        return "; ".join(unread_conditions(q, years, **kw))

    assert "'before 2012': no report covers it (the reports cover 2012 to 2023)" in unread("Cars before 2012?")
    assert "'after 2023'" in unread("How many cars did Audi deliver after 2023?")
    assert "a time relative to now 'last year'" in unread("How many cars did Audi deliver last year?")
    assert "'past three years'" in unread("What was Audi's revenue in the past three years?")
    assert "a comparison of periods ('Which year' ... 'most')" in unread("Which year did Audi deliver the most cars?")
    assert "a trend 'over the years'" in unread("How have Audi's CO2 emissions changed over the years?")
    assert "leaving out a year 'except 2020'" in unread("Cars delivered in every year except 2020?")
    assert "leaving out a year 'besides 2013'" in unread("water use in every report besides 2013")
    assert "a time relative to now 'recent'" in unread("recent sustainability initiatives at audi")
    assert "'1990s': no report covers it" in unread("audi production volume during the 1990s")
    assert "a comparison of periods ('which report' ... 'lowest')" in unread(
        "which report shows the lowest energy use per car")
    assert "a yes/no comparison" in unread("has the accident rate improved since 2015")
    assert "a yes/no comparison" in unread("did emissions go up or down between 2014 and 2015")
    assert unread("what does the most recent report say about recycling") == ""  # a position, not "recent"
    # plans for after the last report are stated in the reports: not refused as uncovered
    assert unread("What does Audi plan after 2025?") == "" and unread("Audi's targets for the 2030s?") == ""
    assert "no report covers it" in unread("How many cars did Audi deliver after 2025?")
    q = "Did Audi deliver more cars in 2021 than in 2020?"
    assert "a yes/no comparison" in unread(q) and unread(q, extractive=False) == ""  # an LLM can compare
    for fine in ("How many cars did Audi deliver in 2019 and 2022?", "What was the revenue in 2021 compared to 2020?",
                 "How many cars did Audi deliver in the previous year, 2019?", "Who chairs the board?",
                 "How many employees did Audi have by the end of 2016?"):
        assert unread(fine) == "", fine
    assert "'currently' was read over every report" in present_note("How much water does Audi currently use?", years)
    assert present_note("How much water did Audi use in 2019?", years) == ""
    with pytest.raises(ValueError, match="non-empty"):
        unread_conditions(" ", years)


def test_parse_decomposition_is_tolerant():
    text = "[2019<SEP>Who led Audi in 2019?]\n- 2022: Who led Audi in 2022?\ngarbage\n[all<SEP>Who leads?]\n[1999<SEP>no]"
    assert parse_decomposition(text, ["2019", "2022"]) == [
        SubQuestion("2019", "Who led Audi in 2019?"), SubQuestion("2022", "Who led Audi in 2022?"),
        SubQuestion(None, "Who leads?")]


def test_parse_extraction_skips_and_counts_bad_records():
    reply = ("ENTITY|Audi|ORG|Audi delivered 1.6 million cars.\n1. RELATION|Audi|Sauber|Partners in Formula 1|8\n"
             "ENTITY|broken\nnonsense line\nRELATION|Audi||x|2")
    types, units, rels, skipped = parse_extraction(reply, chunk=0)
    assert types == {"Audi": "ORG"} and len(units) == 2 and skipped == 3
    assert rels[0].source == "Audi" and rels[0].target == "Sauber" and rels[0].weight == 8


def test_time_sliced_kg_keeps_periods_apart():
    kg = TimeSlicedKG()
    kg.add_period(PeriodExtraction("2019", ["c"], units=[KnowledgeUnit("Audi sold A.", ("Audi",), 0)]))
    kg.add_period(PeriodExtraction("2022", ["d"], units=[KnowledgeUnit("Audi sold B.", ("Audi",), 0)]))
    assert kg.node_id("Audi", "2019") != kg.node_id("Audi", "2022")
    with pytest.raises(ValueError, match="already indexed"):
        kg.add_period(PeriodExtraction("2019", []))
    with pytest.raises(ValueError, match="chunk"):
        kg.add_period(PeriodExtraction("2023", ["x"], units=[KnowledgeUnit("t", ("A",), 5)]))


@pytest.fixture(scope="module")
def tgrag_index(tmp_path_factory):
    out = tmp_path_factory.mktemp("tg") / "idx"
    docs = [d for d in read_period_documents(REPORTS) if d[0] == "2019"]
    build_tgrag_index(docs, out, progress=False)
    return add_period(out, [d for d in read_period_documents(REPORTS) if d[0] == "2022"], progress=False)


def test_index_and_incremental_period(tgrag_index):
    idx = TGragIndex.load(tgrag_index.path)
    assert idx.kg.periods == ["2019", "2022"]
    assert {"Audi"} <= {n for n, p in zip(idx.kg.node_name, idx.kg.node_period) if p == "2019"}
    assert idx.kg.node_id("Audi", "2019") != idx.kg.node_id("Audi", "2022")
    assert len(idx.unit_vecs) == len(idx.kg.unit_text) and len(idx.chunk_vecs) == len(idx.kg.chunk_text)
    pg = idx.property_graph()
    names = {n.name for n in pg.get(properties={"chronorag_tgrag": True}) if hasattr(n, "name")}
    assert {"Audi @ 2019", "Audi @ 2022"} <= names
    mentions = [t for t in pg.get_triplets(relation_names=["MENTIONS"])]
    assert mentions and all(t[0].id.startswith("chunk-") for t in mentions)
    with pytest.raises(ValueError, match="already indexed"):
        add_period(tgrag_index.path, [("2019", "Audi again.")], progress=False)


def test_retrievers(tgrag_index):
    idx = TGragIndex.load(tgrag_index.path)
    idx.encoder = tgrag_index.encoder
    r = TGragRetriever(idx, t_texts=1)
    ranked, results = r.retrieve_chunks("Who led the Board of Management of Audi in 2019 and 2022?")
    assert [res.sub.period for res in results] == ["2019", "2022"]
    assert [idx.kg.chunk_period[c] for c in ranked] == ["2019", "2022"]
    nodes = r.retrieve("How many cars did Audi deliver in 2022?")
    assert nodes[0].node.metadata["period"] == "2022" and "1,614,231" in nodes[0].node.get_content()
    out = answer_tgrag(r, "How many cars did Audi deliver in 2022?")
    assert out["mode"].startswith("extractive") and "1,614,231" in out["answer"]
    assert len(VanillaChunkRetriever(idx, t_texts=2).retrieve_chunks("Formula 1")) == 2
    with pytest.raises(ValueError, match="decompose"):
        TGragRetriever(idx, decompose="magic")


def test_no_llm_extract_needs_the_question_words_and_says_what_is_missing(tgrag_index):
    """Without an LLM the answer is the best retrieved sentence *that holds one of the question's
    informative words* (and a number for "how many", and a year no report covers): never a
    sentence about something else. A period with none is "(not found)", said in ``reason``."""
    idx = TGragIndex.load(tgrag_index.path)
    idx.encoder = tgrag_index.encoder
    r = TGragRetriever(idx)
    out = answer_tgrag(r, "How many deliveries did Audi make in 2022?")  # "deliveries" ~ "delivered"
    assert "1,614,231" in out["answer"] and not out["abstained"], out
    out = answer_tgrag(r, "What did Audi's helicopter division earn in 2019?")
    assert out["abstained"] and out["answer"] == "" and "helicopt" in out["reason"], out
    out = answer_tgrag(r, "How many cars did Audi deliver in 2035?")  # no report covers 2035
    assert out["abstained"] and "2035 (no report covers them)" in out["reason"], out
    out = answer_tgrag(r, "Who led the Board of Management of Audi in 2019 and in 2022, and its helicopter unit?")
    assert all(s["answer"] for s in out["sub_answers"]), out  # the informative "board" holds


def test_answers_refuse_what_the_reports_cannot_show_or_the_reader_cannot_apply(tgrag_index):
    """As a user words it: "last year", "which year ... the most", "before 2019" (reports of 2019
    and 2022): the no-LLM reader refuses with the reason rather than give a sentence from any
    year; the LLM path keeps its answer and says what retrieval did not apply; an open range
    that no report covers is refused before any LLM call."""
    idx = TGragIndex.load(tgrag_index.path)
    idx.encoder = tgrag_index.encoder
    r = TGragRetriever(idx)
    out = answer_tgrag(r, "How many cars did Audi deliver last year?")
    assert out["abstained"] and out["answer"] == "" and out["reason"].startswith("cannot represent: a time relative"), out
    out = answer_tgrag(r, "Which year did Audi deliver the most cars?")
    assert out["abstained"] and "a comparison of periods" in out["reason"], out
    out = answer_tgrag(r, "How many cars did Audi deliver before 2019?")
    assert out["abstained"] and out["sub_answers"] == [] and "no report covers it (the reports cover 2019 to 2022)" \
        in out["reason"], out
    out = answer_tgrag(r, "How many cars did Audi deliver after 2019?")  # the 2022 report
    assert [s["period"] for s in out["sub_answers"]] == ["2022"] and "1,614,231" in out["answer"], out
    with ScriptedOpenAIServer(["1,614,231 cars."]) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        out = answer_tgrag(r, "How many cars did Audi deliver last year?", llm=cfg)
        assert answer_tgrag(r, "How many cars did Audi deliver before 2019?", llm=cfg)["abstained"]
        assert len(srv.requests) == 1  # the uncovered range asked the LLM nothing
    assert out["answer"] == "1,614,231 cars." and not out["abstained"]
    assert "the retrieval did not apply a time relative to now 'last year'" in out["reason"], out


def test_llm_generation_over_http(tgrag_index):
    idx = TGragIndex.load(tgrag_index.path)
    script = ["[2019<SEP>Who led Audi's board in 2019?]\n[2022<SEP>Who led Audi's board in 2022?]",
              "Bram Schot", "Markus Duesmann", "Bram Schot (2019), then Markus Duesmann (2022)."]
    with ScriptedOpenAIServer(script) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        r = TGragRetriever(idx, decompose="llm", llm=cfg)
        out = answer_tgrag(r, "Who led Audi's board in 2019 and 2022?", llm=cfg)
        prompts = [q["messages"][0]["content"] for q in srv.requests]
    assert out["answer"] == "Bram Schot (2019), then Markus Duesmann (2022)."
    assert [s["answer"] for s in out["sub_answers"]] == ["Bram Schot", "Markus Duesmann"]
    assert "Available periods: 2019, 2022" in prompts[0] and "Bram Schot" in prompts[1]
    assert "-> Markus Duesmann" in prompts[3]


def test_a_prompt_over_the_models_context_window_is_retried_cut_to_the_budget(tgrag_index):
    """What SmolLM2's 4,096-token window did to T-GRAG on the Audi reports (whole 1,000-token texts)."""
    from chronorag.errors import ConfigError, LLMError
    from chronorag.integrations.llm import fallbacks, query_scope
    from chronorag.retrievers.tgrag.answer import SUBANSWER_PROMPT

    idx = TGragIndex.load(tgrag_index.path)
    q = "How many cars did Audi deliver in 2022?"
    cfg_probe = TGragRetriever(idx, decompose="rules", context_tokens=60)
    _, results = cfg_probe.retrieve_chunks(q)
    assert len(results) == 1
    whole, cut = cfg_probe.build_context(results), cfg_probe.build_context(results, scope="all")
    assert cut["scope"] == "all" and sum(map(len, cut["texts"])) < sum(map(len, whole["texts"]))
    with pytest.raises(ConfigError, match="scope must be 'graph' or 'all', got 'everything'"):
        cfg_probe.build_context(results, scope="everything")

    def prompt_len(ctx):
        return len(SUBANSWER_PROMPT.format(period=results[0].sub.period or "all periods", graph=ctx["graph"],
                                           texts="\n\n".join(ctx["texts"]), question=results[0].sub.question))

    window = prompt_len(cut)  # characters standing in for the model's window
    overflow = {"status": 400, "body": {"error": {
        "message": "This model's maximum context length is 4096 tokens. However, you requested 6952 tokens.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}}

    def server(req):
        return overflow if len(req["messages"][0]["content"]) > window else "1,614,231 cars"

    with ScriptedOpenAIServer([server] * 4) as srv, query_scope("tg-overflow"):
        cfg = LLMConfig(base_url=srv.base_url, max_retries=0)
        out = answer_tgrag(TGragRetriever(idx, decompose="rules", context_tokens=60, llm=cfg), q, llm=cfg)
        sent = [len(r["messages"][0]["content"]) for r in srv.requests]
    assert out["answer"] == "1,614,231 cars"
    assert sent == [prompt_len(whole), prompt_len(cut)] and sent[0] > window
    assert out["evidence"] == cut["texts"]  # the texts the answer was read from, as cut
    assert fallbacks.counts("tg-overflow") == {"tgrag.context_cut": 1}

    with ScriptedOpenAIServer([overflow] * 4) as srv, pytest.raises(LLMError, match="context_tokens=60"):
        cfg = LLMConfig(base_url=srv.base_url, max_retries=0)
        answer_tgrag(TGragRetriever(idx, decompose="rules", context_tokens=60, llm=cfg), q, llm=cfg)


def test_an_empty_llm_answer_is_an_abstention_with_its_reason(tgrag_index):
    """Gemma 3 270M answered T-GRAG's Audi questions with nothing at all."""
    from chronorag.evaluation import make_method

    with ScriptedOpenAIServer([""] * 4) as srv:
        pred = make_method("t-grag", tgrag_index.path, llm=LLMConfig(base_url=srv.base_url, max_retries=0))(
            {"question": "How many cars did Audi deliver in 2022?"})
    assert pred.answers == [] and pred.abstained and pred.reason == "the LLM gave an empty answer"
    idx = TGragIndex.load(tgrag_index.path)
    out = answer_tgrag(TGragRetriever(idx), "How many cars did Audi deliver in 2022?")  # no LLM
    assert out["abstained"] is False and out["reason"] == "" and out["answer"]


def test_llm_extractor_over_http(tmp_path):
    replies = ["ENTITY|Audi|ORG|Audi delivered 1,614,231 cars in 2022.\nbad record\n"
               "RELATION|Audi|Sauber|Audi enters Formula 1 with Sauber.|9"] * 5
    with ScriptedOpenAIServer(replies) as srv:
        ex = LLMExtractor(LLMConfig(base_url=srv.base_url)).extract("2022", ["chunk one"])
    assert ex.skipped_records == 1 and [r.target for r in ex.relations] == ["Sauber"]
    assert {u.entities for u in ex.units} == {("Audi",), ("Audi", "Sauber")}


def test_cli_tgrag(tmp_path, capsys):
    from chronorag.cli import main

    out = tmp_path / "idx"
    assert main(["-q", "tgrag", "index", str(REPORTS), "--out", str(out)]) == 0
    meta = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert meta["periods"] == ["2019", "2022"] and meta["extractor"] == "SpacyExtractor"
    for method in ("t-grag", "vanilla"):
        assert main(["-q", "eval", "time-longqa", str(out), str(FIXTURES / "tgrag_qa.jsonl"), "--method", method,
                     "--out", str(tmp_path / f"{method}.jsonl")]) == 0
        m = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert "evidence_recall@5" in m and m["n"] == 2
        if method == "t-grag":
            assert m["evidence_recall@5"] == 1.0
    assert np.isfinite(m["latency_ms_p50"])
    # `ask --json` carries the per-period sentences a refusal points to, and the chunks read
    assert main(["ask", str(out), "Did Audi deliver more cars in 2022 than in 2019?", "--method", "t-grag",
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["abstained"] and "sub_answers" in res["reason"] and res["decomposition"] == "rules"
    assert [s["period"] for s in res["sub_answers"]] == ["2019", "2022"] and res["evidence_ids"]
    assert main(["ask", str(out), "Did Audi deliver more cars in 2022 than in 2019?", "--method", "t-grag"]) == 0
    printed = capsys.readouterr().out
    assert "per period:" in printed and "  [2019] " in printed and "  [2022] " in printed


def test_documents_and_property_graph_index(tgrag_index, tmp_path):
    from llama_index.core import Document, PropertyGraphIndex
    from llama_index.core.llms import MockLLM

    from chronorag.retrievers.tgrag import TGragPGRetriever

    docs = [Document(text=(REPORTS / "2022.md").read_text(), metadata={"period": "2022"})]
    idx = build_tgrag_index(docs, tmp_path / "d", progress=False)
    assert idx.kg.periods == ["2022"]
    with pytest.raises(ValueError, match="period"):
        build_tgrag_index([Document(text="x")], tmp_path / "e", progress=False)
    pg = TGragIndex.load(tgrag_index.path).property_graph()
    sub = TGragPGRetriever(pg, index_dir=str(tgrag_index.path), t_texts=1)
    pgi = PropertyGraphIndex.from_existing(property_graph_store=pg, embed_kg_nodes=False, llm=MockLLM())
    nodes = pgi.as_retriever(sub_retrievers=[sub]).retrieve("Who chaired the Board of Management of Audi in 2022?")
    assert nodes and "Markus Duesmann" in nodes[0].node.get_content()


def test_ragas_on_eval_predictions(tmp_path, capsys):
    from chronorag.cli import main
    from chronorag.evaluation.ragas import ragas_scores

    out = tmp_path / "idx"
    assert main(["-q", "tgrag", "index", str(REPORTS), "--out", str(out)]) == 0
    preds = tmp_path / "p.jsonl"
    assert main(["-q", "eval", "time-longqa", str(out), str(FIXTURES / "tgrag_qa.jsonl"), "--method", "t-grag",
                 "--out", str(preds)]) == 0
    capsys.readouterr()
    scores = ragas_scores(preds)
    assert {"non_llm_string_similarity", "non_llm_context_recall", "non_llm_context_precision_with_reference",
            "temporal_context_recall", "temporal_context_precision"} <= set(scores)
    assert all(0.0 <= v <= 1.0 for k, v in scores.items() if k not in ("n", "n_with_gold_evidence", "skipped"))
    assert all(isinstance(why, str) and why for why in scores.get("skipped", {}).values())
    assert main(["ragas", str(preds)]) == 0
    assert json.loads(capsys.readouterr().out)["non_llm_context_recall"] == scores["non_llm_context_recall"]
    # hand-checkable: RAGAS string-matches whole contexts, so an exact passage is recalled, a chunk is not
    passage = "In 2022, Audi delivered 1,614,231 cars to customers worldwide."
    rec = {"question": "q", "evidence": [passage], "predicted": ["1,614,231"], "answers": ["1,614,231"],
           "gold_evidence": [passage]}
    assert ragas_scores([rec])["non_llm_context_recall"] == 1.0
    assert ragas_scores([{**rec, "evidence": ["Markus Duesmann chaired the board."]}])["non_llm_context_recall"] == 0.0


def test_evidence_match_rule_rejects_near_misses():
    from chronorag.metrics import evidence_recall, passage_found

    gold = "In 2022 the Audi Group delivered 1,614,231 cars to customers worldwide, fewer than a year earlier."
    # the passage reflowed (markdown, line breaks, case) still counts
    assert passage_found(gold, "## Deliveries\n\nIn 2022 the AUDI Group delivered 1,614,231 cars to\ncustomers "
                               "worldwide, fewer than a year earlier. Other text.")
    # near miss 1: the same sentence about another year's figure
    assert not passage_found(gold, "In 2021 the Audi Group delivered 1,680,512 cars to customers worldwide, "
                                   "fewer than a year earlier.")
    # near miss 2: every word of the passage is in a long chunk, but scattered (the old
    # "80% of the words anywhere in the chunk" rule counted it)
    filler = " ".join(f"w{i}" for i in range(60))
    scattered = (f"Worldwide customers rated it. {filler} The Audi Group in 2022 said {filler} cars delivered "
                 f"fewer problems {filler} than a year earlier; 1,614,231 to date.")
    assert not passage_found(gold, scattered)
    # a paraphrase with its words together still counts (Time-LongQA's dual/multi evidence is paraphrased)
    assert passage_found(gold, "Audi Group delivered 1,614,231 cars worldwide to its customers in 2022, "
                               "fewer than one year earlier.")
    assert evidence_recall([scattered, "x"], [gold]) == 0.0
    assert evidence_recall(["x", gold + " More."], [gold]) == 1.0 and evidence_recall(["x", gold], [gold], k=1) == 0.0


# ------------------------------------------------------------- LLM paths (issue 9, 14)
def test_an_llm_not_stated_is_an_abstention_not_an_answer(tgrag_index):
    """The sub-answer prompt asks the model to say "not stated" when the material does not answer;
    seen with SmolLM2 as the final answer "The answer is not stated." with abstained false. Now
    all-unstated is an abstention with the reason, and one unstated period of two is a partial
    answer that says which period."""
    idx = TGragIndex.load(tgrag_index.path)
    q = "Who led Audi's board in 2019 and 2022?"
    dec = "[2019<SEP>Who led Audi's board in 2019?]\n[2022<SEP>Who led Audi's board in 2022?]"
    with ScriptedOpenAIServer([dec, "The answer is not stated.", "Not stated."]) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        out = answer_tgrag(TGragRetriever(idx, decompose="llm", llm=cfg), q, llm=cfg)
        assert len(srv.requests) == 3  # no synthesis of two non-answers
    assert out["abstained"] and out["answer"] == "", out
    assert out["reason"].startswith("the LLM found no answer in the retrieved material for 2019, 2022"), out
    with ScriptedOpenAIServer([dec, "Bram Schot", "The reports do not say.", "Bram Schot led it in 2019."]) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        out = answer_tgrag(TGragRetriever(idx, decompose="llm", llm=cfg), q, llm=cfg)
    assert out["answer"] == "Bram Schot led it in 2019." and not out["abstained"]
    assert out["reason"].startswith("partial answer: the LLM found no answer in the retrieved material for 2022")


def test_a_synthesis_that_denies_its_stated_parts_is_not_the_answer(tgrag_index):
    """Both periods were answered, but the synthesis says the reports do not answer: that
    denial is no answer (before, it came back as the answer with abstained false). The stated
    sub-answers are the answer, the reason says what the synthesis did, and it is counted."""
    from chronorag.integrations.llm import fallbacks, query_scope

    idx = TGragIndex.load(tgrag_index.path)
    q = "Who led Audi's board in 2019 and 2022?"
    dec = "[2019<SEP>Who led Audi's board in 2019?]\n[2022<SEP>Who led Audi's board in 2022?]"
    with ScriptedOpenAIServer([dec, "Bram Schot", "Markus Duesmann",
                               "The reports do not state who led the board in both years."]) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        with query_scope("tgrag-synth"):
            out = answer_tgrag(TGragRetriever(idx, decompose="llm", llm=cfg), q, llm=cfg)
        assert len(srv.requests) == 4
    assert out["answer"] == "[2019] Bram Schot [2022] Markus Duesmann" and not out["abstained"], out
    assert "synthesis said there is no answer" in out["reason"] and "tgrag.synthesis" in out["reason"], out
    assert fallbacks.counts("tgrag-synth") == {"tgrag.synthesis": 1}
    # a synthesis that answers is kept as it is, with no reason
    with ScriptedOpenAIServer([dec, "Bram Schot", "Markus Duesmann",
                               "Bram Schot in 2019 and Markus Duesmann in 2022."]) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        out = answer_tgrag(TGragRetriever(idx, decompose="llm", llm=cfg), q, llm=cfg)
    assert out["answer"] == "Bram Schot in 2019 and Markus Duesmann in 2022." and out["reason"] == "", out


def test_decomposition_in_the_papers_format_with_a_range(tgrag_index):
    text = ('<think>\nTwo periods; the second is a range.\n</think>\n'
            '[2019<SEP>"Who led Audi in 2019?"] [2020-2022<SEP>"Who led Audi in 2020-2022?"]')
    assert parse_decomposition(text, ["2019", "2022"]) == [
        SubQuestion("2019", "Who led Audi in 2019?"), SubQuestion("2022", "Who led Audi in 2020-2022?")]
    assert [s.period for s in parse_decomposition('[2021-2022<SEP>"q"]')] == ["2021", "2022"]
    idx = TGragIndex.load(tgrag_index.path)
    with ScriptedOpenAIServer([text]) as srv:
        r = TGragRetriever(idx, llm=LLMConfig(base_url=srv.base_url), similarity_top_k=1)  # LLM given: LLM decomposes
        ranked, results = r.retrieve_chunks("Who led Audi from 2019 to 2022?")
    assert r.decompose == "llm" and [x.sub.period for x in results] == ["2019", "2022"]
    assert {x.decomposition for x in results} == {"llm"}


def test_unparseable_decomposition_retries_then_records_the_fallback(tgrag_index):
    from chronorag.integrations.llm import fallbacks, query_scope

    idx = TGragIndex.load(tgrag_index.path)
    fallbacks.clear()
    with ScriptedOpenAIServer(["<think>hmm</think>I would split it by year.", "Sure! Years: both."]) as srv:
        r = TGragRetriever(idx, decompose="llm", llm=LLMConfig(base_url=srv.base_url))
        with query_scope("q-dec"):
            subs, how = r.decomposition("How many cars did Audi deliver in 2019 and 2022?")
        retry = srv.requests[1]["messages"][-1]["content"]
    assert how == "rules (LLM fallback)" and [s.period for s in subs] == ["2019", "2022"]
    assert "[period<SEP>sub-question]" in retry
    assert fallbacks.counts("q-dec") == {"tgrag.decompose_rules": 1}
    # seen with SmolLM2: "[2019<SEP>2019]" parses, but a bare year (or an unrelated question) is no
    # sub-question of this one, so it is retried and then replaced by the rules, counted
    with ScriptedOpenAIServer(["[2019<SEP>2019]", "[2022<SEP>What is the weather like?]"]) as srv:
        r = TGragRetriever(idx, decompose="llm", llm=LLMConfig(base_url=srv.base_url))
        with query_scope("q-dec2"):
            subs, how = r.decomposition("How many cars did Audi deliver in 2019 and 2022?")
    assert how == "rules (LLM fallback)" and [s.question for s in subs] == [
        "How many cars did Audi deliver in 2019?", "How many cars did Audi deliver in 2022?"]
    assert fallbacks.counts("q-dec2") == {"tgrag.decompose_rules": 1}
    # seen with SmolLM2 on "... as of 2012?": title lines for other years. A line that is no question,
    # or a decomposition that asks about none of the question's own years, is unusable
    q = "Which Audi models had hybrid technology as of 2019?"
    for bad in ("[2022<SEP>2022 Audi A8]", "[2022<SEP>In 2022 Audi A8]",
                "[2022<SEP>Which Audi models had hybrid technology in 2022?]"):
        with ScriptedOpenAIServer([bad, bad]) as srv:
            r = TGragRetriever(idx, decompose="llm", llm=LLMConfig(base_url=srv.base_url))
            with query_scope("q-dec3"):
                subs, how = r.decomposition(q)
        assert how == "rules (LLM fallback)" and subs == [SubQuestion("2019", q)], (bad, subs)
        assert (": no line is a question: " if "Audi A8" in bad else
                ": no sub-question asks about 2019, the year(s) the question names: ") in str(
            fallbacks.last_detail("tgrag.decompose_rules", "q-dec3"))
    ok = "[2019<SEP>Which Audi models had hybrid technology in 2019?]\n[2022<SEP>Which had it in 2022?]"
    with ScriptedOpenAIServer([ok]) as srv:
        subs, how = TGragRetriever(idx, decompose="llm", llm=LLMConfig(base_url=srv.base_url)).decomposition(q)
    assert how == "llm" and [s.period for s in subs] == ["2019", "2022"]  # one of the question's years suffices


def test_llm_objects_are_accepted_and_unknown_ones_rejected(tgrag_index):
    from llama_index.llms.openai_like import OpenAILike

    from chronorag.errors import LLMError

    idx = TGragIndex.load(tgrag_index.path)
    script = ["[2022<SEP>How many cars did Audi deliver in 2022?]", "<think>It says 1,614,231.</think>1,614,231 cars"]
    with ScriptedOpenAIServer(script) as srv:
        li = OpenAILike(api_base=srv.base_url, api_key="x", model="chronorag", is_chat_model=True)
        r = TGragRetriever(idx, decompose="llm", llm=li)
        out = answer_tgrag(r, "How many cars did Audi deliver in 2022?", llm=li)
        prompt = srv.requests[1]["messages"][0]["content"]
    assert out["mode"].startswith("LLM") and out["answer"] == "1,614,231 cars" and out["decomposition"] == "llm"
    assert "Facts from the 2022 knowledge graph" in prompt and " -- " in prompt  # K_valid and R_valid lines
    with pytest.raises(LLMError, match="llm must be"):
        TGragRetriever(idx, llm=object())
    with pytest.raises(LLMError, match="llm must be"):
        answer_tgrag(TGragRetriever(idx), "q?", llm="http://localhost:8000/v1")


def test_eval_uses_the_llm_decomposition_and_says_so(tgrag_index):
    from chronorag.evaluation import make_method

    script = ["[2022<SEP>How many cars did Audi deliver in 2022?]", "1,614,231"]
    with ScriptedOpenAIServer(script) as srv:
        m = make_method("t-grag", tgrag_index.path, llm_url=srv.base_url)
        pred = m({"question": "How many cars did Audi deliver in 2022?", "answers": ["1,614,231"]})
    assert pred.info["decomposition"] == "llm" and pred.answers == ["1,614,231"]
    assert pred.info["evidence_k"] == len(pred.evidence) >= 1


def test_retriever_conventions(tgrag_index):
    import asyncio

    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler
    from llama_index.core.instrumentation.events.retrieval import RetrievalStartEvent
    from llama_index.core.schema import MetadataMode
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    from chronorag.retrievers.tgrag import TGragPGRetriever

    idx = TGragIndex.load(tgrag_index.path)
    idx.encoder = tgrag_index.encoder
    r = TGragRetriever(idx, similarity_top_k=2, decompose="none")
    q = "Who chaired the Board of Management of Audi?"
    nodes = r.retrieve(q)
    assert len(nodes) == 2 and all(-1.0 <= n.score <= 1.0 for n in nodes)  # cosine similarities, not ranks
    assert nodes[0].score != 2.0 and "tgrag_score" in nodes[0].node.metadata
    llm_view = nodes[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert "period" in llm_view and "chunk_id" not in llm_view and "tgrag_score" not in llm_view
    only22 = r.retrieve(q, time_filter="2022")
    assert only22 and {n.node.metadata["period"] for n in only22} == {"2022"}
    f = MetadataFilters(filters=[MetadataFilter(key="period", value="2022", operator="<")])
    assert {n.node.metadata["period"] for n in r.retrieve(q, time_filter=f)} == {"2019"}
    assert {n.node.metadata["period"] for n in VanillaChunkRetriever(idx, similarity_top_k=3).retrieve(
        q, time_filter=["2019"])} == {"2019"}
    with pytest.raises(ValueError, match="not indexed"):
        r.retrieve(q, time_filter=["1999"])
    # a MetadataFilters value that is no indexed period matched nothing, silently (session 35)
    from chronorag.errors import ConfigError

    for value, op in (("2030", "=="), ("twenty19", ">=")):
        with pytest.raises(ConfigError, match="not an indexed period"):
            r.retrieve(q, time_filter=MetadataFilters(filters=[MetadataFilter(key="period", value=value, operator=op)]))
    with pytest.raises(TypeError, match="time_filter must be"):  # an ArgumentTypeError, a ChronoRAGError
        r.retrieve(q, time_filter=2019)
    assert r.retrieve(q, time_filter=MetadataFilters(filters=[MetadataFilter(key="period", value="2030", operator="!=")]))

    async def both():
        return await asyncio.gather(r.aretrieve(q, time_filter="2019"), r.aretrieve(q, time_filter="2022"))

    a, b = asyncio.run(both())
    assert {n.node.metadata["period"] for n in a} == {"2019"} and {n.node.metadata["period"] for n in b} == {"2022"}
    vanilla = VanillaChunkRetriever(idx, similarity_top_k=3)
    late = asyncio.run(vanilla.aretrieve(q, time_filter="2022"))  # per-query filter on the async path too
    assert late and {n.node.metadata["period"] for n in late} == {"2022"}
    with pytest.raises(ValueError, match="not indexed"):
        asyncio.run(vanilla.aretrieve(q, time_filter=["1999"]))

    class Count(BaseEventHandler):
        n: int = 0

        def handle(self, event, **kwargs):
            if isinstance(event, RetrievalStartEvent):
                self.n += 1

    counter = Count()
    get_dispatcher().add_event_handler(counter)
    try:
        sub = TGragPGRetriever(idx.property_graph(), index_dir=str(tgrag_index.path), similarity_top_k=1)
        sub.retrieve(q)
    finally:
        get_dispatcher().event_handlers.remove(counter)
    assert counter.n == 1 and TGragPGRetriever.reads_graph_store is False


def test_context_budget_covers_graph_and_texts(tgrag_index):
    from chronorag.retrievers.tgrag import count_tokens

    idx = TGragIndex.load(tgrag_index.path)
    idx.encoder = tgrag_index.encoder
    q = "Who chaired the Board of Management of Audi in 2022?"
    _, res = TGragRetriever(idx).retrieve_chunks(q)
    full = TGragRetriever(idx).build_context(res)
    assert full["scope"] == "graph" and full["tokens"]["graph"] <= 1600 and full["texts"] == [idx.kg.chunk_text[1]]
    budget = full["tokens"]["graph"] + 20
    tight = TGragRetriever(idx, context_tokens=budget, budget_scope="all").build_context(res)
    assert tight["graph"] == full["graph"] and tight["tokens"]["graph"] + tight["tokens"]["texts"] <= budget
    assert tight["texts"] and sum(count_tokens(t) for t in tight["texts"]) <= 20  # the text was cut to fit
    assert idx.kg.chunk_text[1].startswith(tight["texts"][0])
    assert any(" -- " in line for line in TGragRetriever(idx).relation_lines(res))  # R_valid exists


def test_informative_word_counts_follow_the_kg_as_periods_are_added():
    """The sentence-frequency counts behind "informative word" are cached per KG and
    recounted when a period adds sentences: a word in every sentence of 2019 stops being
    informative only once 2020's sentences are counted too, and a dropped KG frees its counts."""
    import gc

    from chronorag.retrievers.tgrag import answer as tg_answer

    kg = TimeSlicedKG()
    kg.add_period(PeriodExtraction("2019", ["c"], units=[
        KnowledgeUnit("Audi delivered 1,800,000 cars.", ("Audi",), 0)]))
    df, n = tg_answer._doc_freq(kg)
    assert n == 1 and df[tg_answer._stems("delivered").pop()] == 1
    kg.add_period(PeriodExtraction("2020", ["c"], units=[
        KnowledgeUnit(f"Audi opened plant {i}.", ("Audi",), 0) for i in range(3)]))
    df, n = tg_answer._doc_freq(kg)
    assert n == 4 and df["audi"] == 4 and df[tg_answer._stems("delivered").pop()] == 1
    assert len(tg_answer._DF_CACHE) >= 1 and kg in tg_answer._DF_CACHE
    size = len(tg_answer._DF_CACHE)
    del kg
    gc.collect()
    assert len(tg_answer._DF_CACHE) == size - 1


def test_no_llm_extract_prefers_the_sentence_covering_more_rare_question_words():
    """Of the retrieved sentences that may answer, the one holding more of the question's rare
    words wins over a better-ranked one holding fewer; a model name such as "R8" is not the
    quantity a "how many" question needs."""
    from chronorag.retrievers.tgrag import answer as tg_answer
    from chronorag.retrievers.tgrag.decomposition import SubQuestion as Sub
    from chronorag.retrievers.tgrag.retriever import _PeriodResult

    texts = ["Audi sold special editions of 10 vehicles to collectors.",   # "vehicles" only
             "Audi delivered 1,614,231 vehicles to customers.",            # "delivered" and "vehicles"
             "Audi built the R8 at its Neckarsulm site."] + [f"Audi opened showroom {c}." for c in "abcdefg"]
    kg = TimeSlicedKG()
    kg.add_period(PeriodExtraction("2022", ["c"], units=[KnowledgeUnit(t, ("Audi",), 0) for t in texts]))
    res = _PeriodResult(sub=Sub("2022", "How many vehicles did Audi deliver in 2022?"),
                        chunk_ids=[0], units=[0, 1, 2], valid_nodes=[])
    assert tg_answer._extract(kg, res, ["2022"]) == (texts[1], "")
    res = _PeriodResult(sub=Sub("2022", "How many R8 did Audi build in 2022?"),
                        chunk_ids=[0], units=[2], valid_nodes=[])
    text, why = tg_answer._extract(kg, res, ["2022"])
    assert text == "" and "a number" in why


def test_a_sub_answer_that_writes_the_next_prompt_is_refused(tgrag_index):
    """A base model continues the prompt: it writes another prompt-like document ("Answer the
    question for 2013 using only the material below ...") for a 2019 sub-question. That reply
    repeats the template's own wording: counted as llm.echo and never an answer; that period is
    unanswered (said in the reason) and the other periods still count."""
    from chronorag.errors import LLMEchoError
    from chronorag.integrations.llm import fallbacks, query_scope, resolve_llm

    idx = TGragIndex.load(tgrag_index.path)
    drift = ("Answer the question for 2013 using only the material below.\n\nFacts from the 2013 knowledge "
             "graph:\n[2013] Audi delivered cars.")
    with ScriptedOpenAIServer([drift, drift, "Markus Duesmann", drift, "Bram Schot, using only the material below."]) as srv:
        cfg = LLMConfig(base_url=srv.base_url)
        with query_scope("tgrag-echo"):
            out = answer_tgrag(TGragRetriever(idx), "Who led Audi's board in 2019?", llm=cfg)
            assert out["abstained"] and out["answer"] == "" and "repeated the prompt" in out["reason"], out
            out = answer_tgrag(TGragRetriever(idx), "Who led Audi's board in 2019 and 2022?", llm=cfg)
        with pytest.raises(LLMEchoError, match="prompt's own wording"):  # the client's own error
            resolve_llm(cfg).complete([{"role": "user", "content": "x"}], template="{q} using only the material below.")
    # 2019 echoed, 2022 answered; the synthesis echoed too, so the stated answer stands alone
    assert out["answer"] == "[2022] Markus Duesmann" and not out["abstained"], out
    assert out["reason"].startswith("partial answer: the LLM repeated the prompt") and "2019" in out["reason"]
    assert fallbacks.counts("tgrag-echo") == {"llm.echo": 3}  # the last call ran outside the scope


def test_a_figure_no_retrieved_text_holds_is_withheld_or_flagged(tgrag_index):
    """A model writes plausible figures from memory: an answer whose figures no retrieved text
    states is withheld (counted as tgrag.ungrounded), one with some unshown figures is flagged,
    and a figure the texts state (or round to, or compute) passes."""
    from chronorag.evaluation import make_method
    from chronorag.integrations.llm import fallbacks

    q = "How many cars did Audi deliver in 2022?"
    cases = [("Audi delivered 1,700,000 cars in 2022.", True, "withheld"),
             ("Audi delivered 1,614,231 cars, 3.2 percent more than the 1,564,000 of 2021.", False, "unverified"),
             ("About 1.61 million cars.", False, None),
             # 1,614,231 - 642,548, from two sentences: counts only when the answer words a change
             ("1,614,231 cars, 971,683 more than were delivered in China.", False, None),
             ("1,614,231 cars, of which 971,683 outside China.", False, "unverified")]
    for i, (reply, withheld, why) in enumerate(cases):
        with ScriptedOpenAIServer(["[2022<SEP>How many cars did Audi deliver in 2022?]", reply]) as srv:
            pred = make_method("t-grag", tgrag_index.path, llm=LLMConfig(base_url=srv.base_url))(
                {"question": q, "quid": f"fig-{i}"})
        assert pred.abstained is withheld, (reply, pred)
        assert (pred.answers == []) is withheld
        if withheld:
            assert "1,700,000" in pred.reason
        if why is None:
            assert pred.reason == "" and "tgrag.ungrounded" not in fallbacks.counts(f"fig-{i}"), pred.reason
        else:
            assert why in pred.reason and "tgrag.ungrounded" in pred.reason, pred.reason
            assert fallbacks.counts(f"fig-{i}")["tgrag.ungrounded"] == 1


def test_ungrounded_numbers_reads_precision_scale_and_simple_arithmetic():
    from chronorag.graphs.answer_checks import checked_numbers, ungrounded_numbers

    texts = ["Revenue rose by 10.6 percent to EUR 48,771 million.", "Profit: EUR 6,929 (4,187) million."]
    assert ungrounded_numbers("EUR 48.8 billion, up 10.6%", texts) == []
    assert ungrounded_numbers("EUR 2,742 million in all", texts) == []  # 6,929 - 4,187 in one sentence, in millions
    assert ungrounded_numbers("EUR 2,742 million", ["Profit: EUR 6,929 million.", "Before: EUR 4,187 million."]) \
        == ["2,742 million"]  # across sentences, a difference needs a change word
    assert ungrounded_numbers("EUR 2,742 million more", ["Profit: EUR 6,929 million.", "Before: EUR 4,187 million."]) \
        == []
    assert ungrounded_numbers("12 mn units, 2,019 cars", ["EUR 12 million"]) == ["2,019"]  # "2,019" is a count
    assert ungrounded_numbers("The top 12 may change", ["The top 11"]) == ["12"]  # "may" is no month here
    with pytest.raises(TypeError, match="an item 1"):
        ungrounded_numbers("12", ["a", 1])
    assert ungrounded_numbers("12 cars", iter(["12 cars"])) == []  # any iterable of texts
    assert ungrounded_numbers("Profit rose 65.5 percent.", texts) == []  # 6,929 / 4,187 - 1
    assert ungrounded_numbers("EUR 52,000 million", texts) == ["52,000 million"]
    assert ungrounded_numbers("In 2019 it had 3 plants; 12 in 2030.", texts, question="... by 2030?") == ["12"]
    assert checked_numbers("In 2019, 3 plants and 1,200 robots (4.5%).") == ["1,200", "4.5"]
    assert checked_numbers("On December 31, 2020 and 15 May 2021: the 23rd A8, 100km, 12.5bn.") == ["12.5bn"]
    with pytest.raises(TypeError, match="list of strings"):
        ungrounded_numbers("12", "a text")


def test_the_extract_keeps_acronyms_and_model_names_as_question_words():
    """'R&D', 'CO2' and 'Q4' were dropped from the question's words (only 3+ letter words counted),
    so "How much did Audi spend on R&D in 2018?" was answered by a sentence on drivers' spending."""
    from chronorag.retrievers.tgrag.answer import _stems

    got = _stems("How much did Audi spend on R&D, CO2 cuts and the Q4 e-tron?")
    assert {"r&d", "co2", "q4", "e-tron", "spend"} <= got


def test_the_answer_checks_refuse_a_non_string_with_its_value():
    from chronorag.graphs.answer_checks import checked_numbers, named_in, offers_choice

    with pytest.raises(TypeError, match="got int: 12"):
        checked_numbers(12)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got NoneType: None"):
        offers_choice(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be strings, got 'Iraq' and 3"):
        named_in("Iraq", 3)  # type: ignore[arg-type]


def test_no_llm_extract_skips_forecasts_other_names_and_parts_of_a_year():
    """A user's-eye review (session 34) found the extractive reader answering "How many cars did
    Audi deliver in 2022?" with the 2022 report's outlook for 2023, "What was BMW's revenue?"
    with Audi's, and a year's revenue with the fourth quarter's. Now: a forecast is no figure of
    its report's year unless the question asks about plans; the answer must mention one of the
    names the question uses (or the period is "not found", naming it); a quarter's figure does
    not answer for a year, and a question about a quarter needs that quarter."""
    from chronorag.retrievers.tgrag import answer as tg_answer
    from chronorag.retrievers.tgrag.decomposition import SubQuestion as Sub
    from chronorag.retrievers.tgrag.retriever import _PeriodResult

    texts = ["Deliveries are likely to amount to between 1.8 and 1.9 million cars in 2023.",  # a forecast
             "Audi posted revenue of EUR 16,710 million in the fourth quarter of 2022.",
             "Audi delivered 1,614,231 cars to customers.",
             "The Audi Group generated revenue of EUR 61,753 million in the 2022 fiscal year.",
             "In China, Audi delivered 642,548 cars.",
             "In South Africa, Audi delivered 5,012 cars."] + [f"Audi opened showroom {c}." for c in "abcdefghij"]
    kg = TimeSlicedKG()
    kg.add_period(PeriodExtraction("2022", ["c"], entity_types={"Audi": "ORG", "China": "GPE", "South Africa": "GPE"},
                                   units=[KnowledgeUnit(t, ("Audi", *[x for x in ("China", "South Africa") if x in t]), 0)
                                          for t in texts]))

    def extract(question: str, units: list[int]) -> tuple[str, str]:
        res = _PeriodResult(sub=Sub("2022", question), chunk_ids=[0], units=units, valid_nodes=[])
        return tg_answer._extract(kg, res, ["2022"])

    assert extract("How many cars did Audi deliver in 2022?", [0, 2]) == (texts[2], "")
    assert not tg_answer._FORECAST.search("As expected, Audi met its delivery targets in 2022, more than planned.")
    assert tg_answer._parts_of_year("in the second half-year") == {"h2"}
    text, why = extract("How many cars did Audi deliver in 2022?", [0])
    assert text == "" and "1 that were forecasts or targets" in why
    assert extract("How many cars does Audi expect to deliver in 2023?", [0, 2])[0] == texts[0]  # asks about plans
    assert extract("What was Audi's revenue in 2022?", [1, 3]) == (texts[3], "")
    assert extract("What was Audi's revenue in the fourth quarter of 2022?", [3, 1]) == (texts[1], "")
    text, why = extract("What was BMW's revenue in 2022?", [1, 3])
    assert text == "" and "the name 'bmw'" in why and "lacked a name of the question" in why
    assert extract("How many cars did Audi deliver in China in 2022?", [2, 4]) == (texts[4], "")
    assert extract("how many cars did audi deliver in china in 2022", [2, 4]) == (texts[4], "")
    assert extract("How many cars did Audi deliver in South Africa in 2022?", [4, 5]) == (texts[5], "")


def test_no_llm_extract_prefers_the_questions_subject_and_for_who_a_named_one():
    """A figure is somebody's figure: for "how many" and keyword queries a sentence about a
    subject the question does not name (a sub-brand ranked first) loses to one about the
    question's subject or the reports' own (a sentence naming Audi beside Lamborghini is about
    Audi); a question whose answer may be a name keeps the ranking. "Who ...?" prefers a sentence
    that names somebody the question does not."""
    from chronorag.retrievers.tgrag import answer as tg_answer
    from chronorag.retrievers.tgrag.decomposition import SubQuestion as Sub
    from chronorag.retrievers.tgrag.retriever import _PeriodResult

    texts = ["Lamborghini delivered 9,233 vehicles to customers.",
             "The Audi Group delivered 1,614,231 vehicles to customers.",
             "The impetus came from the Chairman of the Board of Management himself.",
             "Markus Duesmann, Chairman of the Board of Management, signed the letter.",
             "Audi delivered 1,614,231 vehicles and Lamborghini 9,233."] + [f"Audi opened showroom {c}." for c in "abcdefghij"]
    types = {"Audi": "ORG", "Audi Group": "ORG", "Lamborghini": "ORG", "Markus Duesmann": "PERSON"}
    kg = TimeSlicedKG()
    kg.add_period(PeriodExtraction("2022", ["c"], entity_types=types, units=[
        KnowledgeUnit(t, tuple(x for x in types if x in t) or ("Audi",), 0) for t in texts]))

    def extract(question: str, units: list[int]) -> str:
        res = _PeriodResult(sub=Sub("2022", question), chunk_ids=[0], units=units, valid_nodes=[])
        return tg_answer._extract(kg, res, ["2022"])[0]

    assert extract("How many vehicles did Audi deliver in 2022?", [0, 1]) == texts[1]
    assert extract("audi vehicle deliveries 2022", [0, 1]) == texts[1]
    assert extract("vehicle deliveries 2022", [0, 4]) == texts[4]  # names Audi beside Lamborghini
    assert extract("How many vehicles did Lamborghini deliver in 2022?", [1, 0]) == texts[0]
    assert extract("Which brand delivered 9,233 vehicles to customers in 2022?", [0, 1]) == texts[0]
    assert extract("How many vehicles did Audi deliver in 2022?", [0]) == texts[0]  # a preference, not a gate
    assert extract("Who chaired the Board of Management in 2022?", [2, 3]) == texts[3]
    assert extract("In 2022, who chaired the Board of Management?", [2]) == texts[2]


def test_counted_years_uncovered_years_and_comparisons_are_read_and_said():
    """"the year after 2019" is 2020 (was the open range "after 2019"); a year no report covers
    beside one that is covered is named in a partial answer (the covered year was "not found");
    a comparison the extractive reader only shows is said; "now" is the present."""
    from chronorag.retrievers.tgrag.decomposition import comparison_note, present_note

    years = [str(y) for y in range(2012, 2024)]
    assert decompose_rule_based("What was the revenue the year after 2019?", years) == [
        SubQuestion("2020", "What was the revenue in 2020?")]
    assert [s.period for s in decompose_rule_based("revenue two years before 2021", years)] == ["2019"]
    assert [s.period for s in decompose_rule_based("revenue in the years after 2021", years)] == ["2022", "2023"]
    assert [s.period for s in decompose_rule_based("revenue in the three years following 2018", years)] == [
        "2019", "2020", "2021"]
    assert comparison_note("How much did Audi invest in 2019 to increase capacity?") == ""
    assert "not computed" in comparison_note("How much did revenue change from 2020 to 2021?")
    assert "not computed" in comparison_note("Which year had the higher revenue, 2020 or 2021?")
    assert comparison_note("How many cars did Audi deliver in 2019 and 2022?") == ""
    assert "'now' was read over every report" in present_note("Who is the CEO of Audi now?", years)


def test_a_covered_year_is_answered_beside_an_uncovered_one(tgrag_index):
    idx = TGragIndex.load(tgrag_index.path)
    idx.encoder = tgrag_index.encoder
    out = answer_tgrag(TGragRetriever(idx), "How many cars did Audi deliver in 2022 and 2030?")
    assert "1,614,231" in out["answer"] and not out["abstained"]
    assert out["reason"].startswith("partial answer") and "no report covers 2030" in out["reason"], out["reason"]
    out = answer_tgrag(TGragRetriever(idx), "How many cars did Audi deliver after 2011?")  # a range read: no note
    assert "no report covers" not in out["reason"], out["reason"]
