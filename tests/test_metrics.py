import pytest

from chronorag.metrics import answer_matches, evidence_recall, exact_match, hits_at_k, token_f1


def test_time_matching_at_gold_granularity():
    assert answer_matches("2010-05", "2010-05")
    assert answer_matches("May 2010", "2010-05")
    assert answer_matches("2010-05-14", "2010-05")
    assert not answer_matches("2010", "2010-05")
    assert not answer_matches("2010-06", "2010-05")
    assert answer_matches("2010-05-14", "2010")
    assert not answer_matches("Iran", "2010")


def test_entity_matching_normalised():
    assert answer_matches("the  Government (Germany)", "Government (Germany)")
    assert answer_matches("Ali\u00a0Khamenei", "Ali Khamenei")
    assert not answer_matches("Government (France)", "Government (Germany)")


def test_hits_at_k():
    ranked = ["China", "Sudan", "Iran"]
    assert hits_at_k(ranked, ["Sudan"], 1) == 0.0
    assert hits_at_k(ranked, ["Sudan"], 2) == 1.0
    assert hits_at_k(ranked, ["Iran", "Kenya"], 3) == 1.0
    with pytest.raises(ValueError, match="k must"):
        hits_at_k(ranked, ["x"], 0)
    with pytest.raises(ValueError, match="golds is empty"):
        hits_at_k(ranked, [], 1)
    with pytest.raises(TypeError):
        hits_at_k("China", ["China"], 1)


def test_em_f1():
    assert exact_match("The Eiffel Tower!", ["eiffel tower"]) == 1.0
    assert token_f1("Audi delivered 1.8 million cars", ["1.8 million cars"]) == pytest.approx(2 * 0.6 * 1 / 1.6)
    assert token_f1("nothing", ["else"]) == 0.0


def test_evidence_recall():
    ev = ["Audi delivered 1,802,073 cars in 2019.", "In 2022 deliveries were 1,614,231."]
    texts = ["... AUDI delivered 1,802,073 cars in 2019 ...", "In 2022, deliveries were 1,614,231 vehicles."]
    assert evidence_recall(texts, ev) == 1.0
    assert evidence_recall(texts[:1], ev) == 0.0
    assert evidence_recall(texts, ev, k=1) == 0.0
    with pytest.raises(ValueError, match="min_overlap"):
        evidence_recall(texts, ev, min_overlap=0)


def test_question_and_prediction_files_reject_bad_rows(tmp_path):
    from chronorag.errors import DataFormatError
    from chronorag.evaluation import load_questions
    from chronorag.evaluation.ragas import load_predictions

    bad_json = tmp_path / "q.jsonl"
    bad_json.write_text('{"question": "a?", "answers": ["x"]}\n{oops\n')
    with pytest.raises(DataFormatError, match=r"q.jsonl:2: invalid JSON"):
        load_questions(bad_json)
    no_answers = tmp_path / "n.jsonl"
    no_answers.write_text('{"question": "a?", "answers": []}\n')
    with pytest.raises(DataFormatError, match=r"n.jsonl:1: row has no non-empty 'answers'"):
        load_questions(no_answers)
    assert load_questions(bad_json, limit=1)[0]["answers"] == ["x"]
    with pytest.raises(ValueError, match="limit"):
        load_questions(bad_json, limit=0)
    with pytest.raises(FileNotFoundError):
        load_questions(tmp_path / "missing.jsonl")
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"quid": 1}\n')
    with pytest.raises(DataFormatError, match=r"p.jsonl:1: field 'question' must be a non-empty string"):
        load_predictions(preds)


def test_one_ranked_answer_parser_for_every_reader():
    from chronorag.graphs.text import parse_ranked_answers
    from chronorag.retrievers.star_rag import parse_ranked_answers as star
    from chronorag.workflows.dense_qa.graph import parse_ranked_lines
    from chronorag.workflows.temptool.tagged_protocol import split_answers

    reply = "<think>\nRomania came first? no...\n</think>\nReasoning: the ECB criticized Romania.\nAnswers:\n1. Romania\n2) \"Greece\"\n- romania\n3: Cyprus."
    assert parse_ranked_answers(reply) == ["Romania", "Greece", "Cyprus"]
    assert star is parse_ranked_answers
    assert parse_ranked_lines(reply) == ["Romania", "Greece", "Cyprus"]
    assert split_answers("<response>Romania | Greece; Cyprus</response>") == ["Romania", "Greece", "Cyprus"]
    assert parse_ranked_answers("a\nb\nc", limit=2) == ["a", "b"]
    with pytest.raises(ValueError, match="limit"):
        parse_ranked_answers("a", limit=0)


def test_one_token_counter():
    from chronorag.evaluation import count_tokens as eval_count
    from chronorag.graphs.text import count_tokens, cut_to_tokens, tokenizer_name
    from chronorag.retrievers.tgrag.retriever import count_tokens as tgrag_count

    assert eval_count is count_tokens and tgrag_count is count_tokens
    assert tokenizer_name() == "tiktoken:cl100k_base"  # the vocabulary LlamaIndex ships, offline
    assert count_tokens("hello world") == 2 and count_tokens(["hello", "world"]) == 2
    cut = cut_to_tokens("one two three four five", 3)
    assert count_tokens(cut) <= 3 and "one two three".startswith(cut)
