"""ToPG's and T-GRAG's spaCy extraction: one pass per document (linear in a passage's length),
the same records as the per-clause ``Span.ents`` / ``Span.noun_chunks`` they replace, and long
passages parsed in segments."""

from __future__ import annotations

import re

import pytest

from chronorag.workflows.topg.extraction import SpacyPropositionExtractor, _clauses, segments

TEXT = ("Barack Obama was born in Honolulu, Hawaii; he studied at Columbia University and Harvard Law "
        "School. Michelle Obama met him in Chicago in 1989 ; they married in 1992. The film Dune was "
        "directed by Denis Villeneuve; it was produced by Legendary Pictures and released in 2021. "
        "Angela Merkel led Germany from 2005 to 2021. ;; Paris is the capital of France.")


@pytest.fixture(scope="module")
def extractor() -> SpacyPropositionExtractor:
    pytest.importorskip("spacy", reason="spaCy comes with the 'nlp' extra")
    return SpacyPropositionExtractor(noun_heads="all")


def test_clauses_match_span_ents_and_noun_chunks(extractor: SpacyPropositionExtractor) -> None:
    doc = extractor.nlp(TEXT)
    clauses = _clauses(doc, True)
    assert len(clauses) >= 8  # sentences split at every semicolon, empty clauses kept
    for start, end, ents, chunks in clauses:
        span = doc[start:end]
        assert [(e.start, e.end) for e in ents] == [(e.start, e.end) for e in span.ents]
        assert [(c.start, c.end) for c in chunks] == [(c.start, c.end) for c in span.noun_chunks]
    assert any(ents for _, _, ents, _ in clauses) and any(ch for _, _, _, ch in clauses)


def test_segments_cut_at_sentence_ends_and_keep_every_word() -> None:
    text = " ".join(f"Sentence number {i} talks about Paris and Rome." for i in range(300))
    segs = segments(text, 500)
    assert len(segs) > 1 and all(len(s) <= 500 for s in segs)
    assert all(s.endswith(".") for s in segs)  # cut at sentence ends
    assert " ".join(segs).split() == text.split()
    assert segments("short text", 500) == ["short text"] and segments("", 500) == []
    blob = "x" * 1200  # no space to cut at: hard cuts, nothing lost
    assert "".join(segments(blob, 500)) == blob
    words = "word " * 300  # no sentence end: cut at spaces
    assert " ".join(segments(words.strip(), 500)).split() == words.split()


def test_long_passage_in_segments_gives_the_same_propositions(extractor: SpacyPropositionExtractor) -> None:
    passage = {"title": "Notes", "text": " ".join([TEXT] * 6)}
    whole = extractor.extract([passage])
    seg = SpacyPropositionExtractor(noun_heads="all", segment_chars=len(TEXT) + 1)
    parts = seg.extract([passage, {"title": "", "text": " "}])
    # segments fall at sentence ends, so the clauses and their entities are the same
    assert [(r.text, r.entities) for r in parts] == [(r.text, r.entities) for r in whole]
    assert seg.stats["passages"] == 2 and all(r.passage == 0 for r in parts)
    assert any("Barack Obama" in r.entities for r in parts)


def test_tgrag_ner_only_pipeline_keeps_sentence_entities() -> None:
    pytest.importorskip("spacy", reason="spaCy comes with the 'nlp' extra")
    from chronorag.retrievers.tgrag.index import SpacyExtractor, _clean_name

    ext = SpacyExtractor()
    assert "parser" not in ext.nlp.pipe_names and "tagger" not in ext.nlp.pipe_names
    ex = ext.extract("2021", [TEXT, TEXT.replace("Paris", "Lyon")])
    doc = ext.nlp(TEXT)
    ref = []
    for sent in doc.sents:  # the per-sentence Span.ents reference
        names = {_clean_name(e.text) for e in sent.ents if e.label_ in ext.labels}
        names = sorted(n for n in names if 2 <= len(n) <= 80 and re.search(r"[A-Za-z]", n))
        if names and len(re.sub(r"\s+", " ", sent.text).strip()) >= 20:
            ref.append(tuple(names))
    got = [u.entities for u in ex.units if u.chunk == 0]
    assert got == ref and any("Angela Merkel" in names for names in got)
    assert any("Lyon" in u.entities for u in ex.units if u.chunk == 1)
