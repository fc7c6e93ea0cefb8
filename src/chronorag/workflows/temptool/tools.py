"""TempTool-R1's three temporal tools over the event store, plain and as LangChain tools.

- ``Get_time(head, rel, tail)``: when the relation held between head and tail.
- ``Get_head_entity(tail, rel, begin_time, end_time, type)``: heads that did ``rel``
  to ``tail`` under a temporal condition.
- ``Get_tail_entity(head, rel, begin_time, end_time, type)``: tails ``head`` did
  ``rel`` to under a temporal condition.

- ``Count_events(rel, head?, tail?, begin_time, end_time, type)``: how many events
  ``(head, rel, tail)`` (either side may be left open) pass the temporal condition, and
  over how many distinct entities on the open side.
- ``Rank_entities(known, known_role, rel, begin_time, end_time, type, exclude, by)``:
  the entities on the other side of ``known`` ranked by number of events in the window
  (``by="count"``), or by their first (``"first"``) or last (``"last"``) event, leaving
  out ``exclude`` (names or phrases, aligned like the others): counting, "most often"
  and "other than X" in one call.

``Get_head_entity`` and ``Get_tail_entity`` also take ``exclude``.

``type`` is one of ``"in/on"``, ``"before"``, ``"after"``, ``"between"`` and the
bounds may be ``"-inf"``/``"inf"`` (semantics in
:func:`chronorag.graphs.time.temporal_mask`; timestamps and intervals alike).

Free-text ``head``/``tail``/``rel`` are aligned to the KG vocabulary first
(:mod:`chronorag.workflows.temptool.alignment`): embedding top-50, rerank, top-1 for
entities; relations are reranked whole (vocabularies up to 2,000 names), so a synonym the
encoder does not see ("blamed" -> accuse) still reaches its relation, after a misspelt word
is corrected to the relation word one edit away ("critisize"). The relation alignment gets a
prior for relations that actually connect the aligned entities, so "criticise" between two
entities picks the relation they share.

No match
    An aligned name whose reranker score is below ``min_score`` (default
    :data:`MIN_ALIGNMENT_SCORE` = 0.6 for entities and relations) is *not* used: the
    call returns a "No match" observation listing the nearest names and their scores,
    so the agent can rephrase instead of silently querying the wrong entity ("Zorglub
    Inc" would otherwise become "Japan"). With the default lexical reranker a score is
    ``cosine + 0.6 * token F1 + 0.4 * exact (+ qualifier and prior terms)``; a phrase
    sharing no word with any name and only a weak embedding similarity stays below 0.6.

Observations
    Every call returns a :class:`ToolResult`: a readable observation, the raw rows
    (``head, rel, tail, time``, *all* of them, sorted by time) and what was aligned.
    The observation lists at most ``max_obs_rows`` rows (default 30), ordered by what
    the call asks: latest first for ``type="before"`` (the events closest to the bound),
    earliest first otherwise; the optional ``order`` argument (``"earliest"`` or
    ``"latest"``) overrides it, so "who ... last" can ask for the latest events. The
    observation says how many rows were left out and which end they came from.

Errors
    Bad arguments (an unparseable time, an unknown ``type``, a missing argument) are
    errors: :meth:`TemporalKGTools.call` returns a :class:`ToolResult` with ``error``
    set, and the LangChain tools raise ``ToolException`` with ``handle_tool_error``, so
    the ``ToolMessage`` has ``status="error"`` and the message as content. Failures
    that are not about the arguments (a broken index) propagate.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from chronorag.errors import ArgumentTypeError, ChronoRAGError, ConfigError, IndexFormatError
from chronorag.graphs.event_index import EventIndex
from chronorag.graphs.text import stem_word
from chronorag.graphs.time import FILTER_TYPES, parse_time
from chronorag.workflows.temptool.alignment import (
    _DEMONYMS,
    Alignment,
    LexicalReranker,
    NameAligner,
    Reranker,
    acronym,
    normalise_tokens,
    relation_tokens,
)

__all__ = ["TemporalKGTools", "ToolResult", "make_langchain_tools", "TOOL_NAMES", "MAX_OBS_ROWS",
           "MIN_ALIGNMENT_SCORE", "ORDERS", "RANK_BY"]

TOOL_NAMES = ("Get_time", "Get_head_entity", "Get_tail_entity", "Count_events", "Rank_entities")
#: default number of rows an observation lists (the rest are counted, not shown)
MAX_OBS_ROWS = 30
#: reranker score below which an aligned name counts as "no match" (see the module docstring)
MIN_ALIGNMENT_SCORE = 0.6
#: a relation phrase sharing no word with any relation name is linked by cosine only when the
#: best name reaches this similarity ...
RELATION_EMBED_FLOOR = 0.25
#: ... and leads the runner-up by this much ...
RELATION_EMBED_MARGIN = 0.05
#: ... or, when only the relations the known entities take part in are compared, by this much:
#: that comparison already leans on the entities, so a weak lead there is not enough ('urge' ~
#: 'Refuse to yield' 0.36 against 0.30 for China, static encoder, was such a wrong pick)
RELATION_EMBED_PRESENT_MARGIN = 0.10
#: ... (among the entities' own relations: when within this much of the vocabulary's best)
RELATION_EMBED_EPS = 0.03
#: relation vocabularies up to this size are reranked whole, not through a cosine shortlist
_ALL_RELATIONS_UP_TO = 2000
ORDERS = ("earliest", "latest")
#: how Rank_entities orders entities
RANK_BY = ("count", "first", "last")


@functools.lru_cache(maxsize=1)
def _english_words() -> frozenset[str]:
    """Whole words of the MiniLM WordPiece vocabulary (empty when it is not installed): a word
    found there is a real word, never a misspelling to correct."""
    try:
        from chronorag.graphs.encoders import minilm_path

        text = (minilm_path() / "vocab.txt").read_text(encoding="utf-8")
    except (ImportError, OSError, ChronoRAGError):
        return frozenset()
    return frozenset(w for w in text.split() if w.isalpha() and w.islower())


class _ArgumentError(ValueError):
    """A tool argument the caller must fix (reported to the agent, never hidden)."""


class _NoMatch(Exception):
    """A phrase that aligns to no name well enough."""

    def __init__(self, role: str, al: Alignment) -> None:
        super().__init__(role)
        self.role, self.alignment = role, al


@dataclass
class ToolResult:
    """What a tool call returns."""

    tool: str
    observation: str
    rows: list[dict[str, str]] = field(default_factory=list)
    aligned: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    latency_ms: float = 0.0


#: irregular forms of the reversing words (see ``TemporalKGTools._reversing``)
_IRREGULAR = {"broke": "break", "broken": "break"}


#: what a stem of the same word may add ("threat"/"threaten", "reduc"/"reduct", "stop"/"stopp")
_STEM_ENDINGS = frozenset({"en", "t", "p", "s", "ed", "ing", "al"})


def _same_word(a: str, b: str) -> bool:
    """Two stems of one word: equal, or one (4+ letters) the other with a word ending ("threat"
    and "threaten", "reduc" and "reduct"; not "break" and "breakfast")."""
    short, long_ = sorted((a, b), key=len)
    return a == b or (len(short) >= 4 and long_.startswith(short) and long_[len(short):] in _STEM_ENDINGS)


#: titles as the KG's sector names write them (CAMEO/ICEWS: a prime minister is "Head of Government")
_ROLE_NAMES = [(re.compile(r"\b(?:prime(?:\s+minister)?|premier|chancellor|pm)\b", re.I), "head of government"),
               (re.compile(r"\bpresident\b", re.I), "head of state"),
               (re.compile(r"\bforeign\s+minist(?:er|ry)\b", re.I), "foreign affairs"),
               (re.compile(r"\b(?:home\s+affairs|interior)\s+minist(?:er|ry)\b", re.I), "domestic affairs"),
               (re.compile(r"\bnavy\b", re.I), "naval")]


def role_words(phrase: str) -> str:
    """``phrase`` with its titles in the KG's sector words ("the Indian prime minister" -> "the
    Indian head of government", "the Thai navy" -> "the Thai naval")."""
    for pat, role in _ROLE_NAMES:
        phrase = pat.sub(role, phrase)
    return phrase


#: a title in a phrase: the sector it is linked to must name that role (other role words, "the Turkish
#: businessman" for "Businessperson (Turkey)", "fighter" for "Combatant", are left to the aligner)
_TITLE = re.compile(r"\b(?:president|prime(?:\s+minister)?|premier|chancellor|pm)\b", re.I)


#: words around a person's name that are no part of it ("Chinese leader Xi", "Mr Obama")
_TITLE_WORDS = frozenset("leader chief head secretary general foreign prime deputy vice former late mr mrs ms dr sir "
                         "the of".split())


def _is_demonym(word: str) -> bool:
    """A word the alignment reads as a country ("Chinese" as China)."""
    return word.lower() in _DEMONYMS


def _name_fits(phrase: str, name: str) -> bool:
    """True when ``phrase`` can be read as the KG name ``name``: the words of one are words of
    the other, each up to a typo ("Obama" and "Barack Obama", "Iraqi police" and "Police (Iraq)",
    "Barak Obama"), or ``phrase`` is the name's acronym ("ECB")."""
    from rapidfuzz import fuzz

    if "(" not in name:  # a person's or a body's own name: "President Xi", "Chinese leader Xi" are Xi Jinping
        words = [w for w in re.findall(r"[\w'-]+", _TITLE.sub(" ", phrase))
                 if w.lower() not in _TITLE_WORDS and not _is_demonym(w)]
        phrase = " ".join(words) or phrase
    phrase = role_words(phrase)  # the sector names' words for a title ("prime minister": Head of Government)
    a, b = set(normalise_tokens(phrase)), set(normalise_tokens(name))
    if not a or not b or phrase.strip().upper() == acronym(name).upper() != "":
        return True

    def within(x: set[str], y: set[str]) -> bool:
        return all(w in y or any(fuzz.ratio(w, v) >= 80 for v in y) for w in x)

    # a sector name must hold every word of the phrase ("German chancellor" is not "Government (Germany)");
    # a plain name may also be a part of the phrase's words
    return within(a, b) or ("(" not in name and within(b, a))


class TemporalKGTools:
    """The three temporal tools over an :class:`EventIndex`.

    Parameters
    ----------
    index : EventIndex
        Store plus name vectors.
    entity_reranker, relation_reranker : Reranker, optional
        Defaults: :class:`~chronorag.workflows.temptool.alignment.LexicalReranker`.
    top_n : int
        Embedding candidates before reranking (default 50).
    max_obs_rows : int
        Rows listed in an observation (default :data:`MAX_OBS_ROWS`); all rows are
        still in :attr:`ToolResult.rows`.
    min_score : float
        Alignment score below which a phrase is a "no match" (default
        :data:`MIN_ALIGNMENT_SCORE`; ``0`` or ``None`` disables the check).
    """

    def __init__(self, index: EventIndex, *, entity_reranker: Reranker | None = None,
                 relation_reranker: Reranker | None = None, top_n: int = 50,
                 max_obs_rows: int = MAX_OBS_ROWS, min_score: float | None = MIN_ALIGNMENT_SCORE) -> None:
        if not isinstance(index, EventIndex):
            raise ArgumentTypeError(f"index must be an EventIndex, got {type(index).__name__}")
        if not isinstance(max_obs_rows, int) or max_obs_rows < 1:
            raise ConfigError(f"max_obs_rows must be a positive integer, got {max_obs_rows!r}")
        self.max_obs_rows = max_obs_rows
        self.min_score = float(min_score) if min_score else None
        self.index = index
        self.store = index.store
        enc = index.encoder
        self.entities = NameAligner(self.store.entities, index.name_vectors("entity"), enc,
                                    top_n=top_n, reranker=entity_reranker)
        # relation vocabularies are small (ICEWS: ~250): every name competes, so a phrase linked by a
        # shared word or synonym ("urged" ~ "appeal request") is never lost to the cosine shortlist
        n_rel = len(self.store.relations)
        self.relations = NameAligner([r.lower() for r in self.store.relations],
                                     index.name_vectors("relation"), enc,
                                     top_n=n_rel if n_rel <= _ALL_RELATIONS_UP_TO else top_n,
                                     reranker=relation_reranker or LexicalReranker(
                                         tokenizer=relation_tokens, qualifier_weight=0.0))
        self._check_dim()
        self._align_cache: dict[tuple[Any, ...], Alignment] = {}
        self._vec_cache: dict[str, np.ndarray] = {}
        self._allowed: np.ndarray | None = None

    def _check_dim(self) -> None:
        """Fail early when the query encoder does not match the stored name vectors."""
        have = self.entities.vectors.shape[1]
        dim = int(getattr(self.index.encoder, "dim", 0) or 0)
        if dim and dim != have:
            raise IndexFormatError(
                f"index {self.index.path} stores {have}-dimensional name vectors but its query "
                f"encoder gives {dim}: rebuild the index with this encoder (chronorag ingest) "
                f"or use the encoder it was built with")

    @contextlib.contextmanager
    def restricted(self, event_ids: np.ndarray) -> Iterator[None]:
        """Within the block, tools only return events among ``event_ids``.

        This turns the tools (and the reasoner driving them) into a *reader* over what
        a retriever returned.
        """
        prev = self._allowed
        self._allowed = np.unique(np.asarray(event_ids, dtype=np.int64))
        try:
            yield
        finally:
            self._allowed = prev

    def _vectors(self, *phrases: str) -> None:
        """Embed the phrases not embedded yet, in one batch."""
        todo = [p for p in dict.fromkeys(phrases) if isinstance(p, str) and p.strip()
                and p not in self._vec_cache]
        if todo:
            for p, v in zip(todo, self.index.encoder.encode(todo)):
                self._vec_cache[p] = v
        if len(self._vec_cache) > 50_000:
            self._vec_cache.clear()

    # --------------------------------------------------------------- alignment
    def align_entity(self, phrase: str) -> Alignment:
        """Align an entity phrase to the KG (cached per phrase)."""
        key = ("e", phrase)
        if key not in self._align_cache:
            al = self.entities.align(phrase, vector=self._vec_cache.get(phrase))
            # a sector name ("Governor (Russia)") must fit the phrase's role words too, at any score short
            # of an exact match: "the Russian president" is not "Governor (Russia)"
            loose = al.score < 1.0 or ("(" in al.name and al.score < 2.0 and _TITLE.search(phrase) is not None)
            if (self.min_score is not None and isinstance(self.entities.reranker, LexicalReranker)
                    and al.score >= self.min_score and loose and not _name_fits(phrase, al.name)):
                # "Emmanuel Macron" is not "Emmanuel Eweta Uduaghan", nor "Zzyzx Qwerty" "Umayya Touqan":
                # a near name holding other words is no reading of the phrase
                al = dataclasses.replace(al, score=self.min_score - 1e-6, note=(
                    f"{phrase!r} is not in the KG: the closest name, {al.name!r}, holds other words"))
            self._align_cache[key] = al
        return self._align_cache[key]

    def _prefetch(self, entities: tuple[str, ...], relation: str) -> None:
        """Embed, in one batch, the phrases that alignment will need to embed."""
        need = [p for p in entities if isinstance(p, str) and p.strip() and ("e", p) not in self._align_cache
                and not self.entities.is_exact(p)]
        if isinstance(relation, str) and relation.strip():
            need.append(relation)
        self._vectors(*need)

    def align_relation(self, phrase: str, *, head: int | None = None, tail: int | None = None) -> Alignment:
        """Align a relation phrase, preferring relations the aligned entities take part in."""
        key = ("r", phrase, head, tail)
        if key in self._align_cache:
            return self._align_cache[key]
        s = self.store
        present = np.zeros(len(s.relations), dtype=np.float64)
        if head is not None or tail is not None:
            present[s.relations_of(subject=None if head is None else s.entities[head],
                                   object=None if tail is None else s.entities[tail])] = 1.0
        # a relation that reverses or withholds an act ("Halt negotiations", "Reject ...", "Threaten to ...")
        # is no reading of a phrase without that word: "hold talks" is not "Halt negotiations"
        asked = {stem_word(_IRREGULAR.get(w, w)) for w in re.findall(r"[a-z]+", phrase.lower())}
        prior = present - np.array([3.0 if rev and not any(_same_word(r, a) for r in rev for a in asked) else 0.0
                                    for rev in self._reversing], dtype=np.float64)
        lexical = self.min_score is not None and isinstance(self.relations.reranker, LexicalReranker)
        fixed, fixes = self._respell(phrase) if lexical else (phrase, [])
        self._vectors(fixed)
        qv = self._vec_cache.get(fixed)
        al = self.relations.align(fixed, prior=(lambda c: prior[c]) if prior.any() else None, vector=qv)
        al = Alignment(query=phrase, name=s.relations[al.index], index=al.index, score=al.score,
                       candidates=al.candidates)
        if lexical and not self._shares_word(fixed, al.name):  # an LLM reranker's pick stands as it is
            al = self._embedding_relation(fixed, al, present, qv)
        elif fixes and al.score >= (self.min_score or 0.0):
            al = dataclasses.replace(al, how="spelling", note=f"relation {phrase!r} read as {al.name!r} after correcting the "
                                     "spelling of " + ", ".join(f"{a!r} to {b!r}" for a, b in fixes))
        self._align_cache[key] = al
        return al

    @functools.cached_property
    def _reversing(self) -> list[set[str]]:
        """Per relation, the stems of the words in its name that reverse, withhold or only threaten
        an act (halt, refuse, reduce, stop, break, threaten)."""
        # the words as written, no synonyms: "Decline comment" withholds nothing
        rev = {stem_word(w) for w in ("halt", "refuse", "reduce", "stop", "break", "threaten")}
        return [{stem_word(w) for w in re.findall(r"[a-z]+", r.lower())} & rev for r in self.store.relations]

    @functools.cached_property
    def _relation_words(self) -> tuple[list[str], set[str]]:
        """The words of the relation names (lower case, six letters or more) and the stems of all."""
        words = {w for r in self.store.relations for w in re.findall(r"[a-z]+", r.lower().replace("_", " "))}
        stems = {t for r in self.store.relations for t in relation_tokens(r.replace("_", " "))}
        return sorted(w for w in words if len(w) >= 6), stems

    def _respell(self, phrase: str) -> tuple[str, list[tuple[str, str]]]:
        """``phrase`` with misspelt words replaced by the relation-name word they are closest to.

        A word of six letters or more that no relation name has (not even its stem) and that is
        not a known English word (the MiniLM vocabulary, when installed) is replaced by the one
        relation-name word within one edit (two from nine letters): "critisize" is "criticize".
        Two equally close words, or none, leave it as written.
        """
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein

        words, stems = self._relation_words
        fixes: list[tuple[str, str]] = []

        def fix(m: re.Match[str]) -> str:
            w = m.group(0).lower()
            if len(w) < 6 or set(relation_tokens(w)) & stems or w in _english_words():
                return m.group(0)
            hits = process.extract(w, words, scorer=Levenshtein.distance, limit=2,
                                   score_cutoff=1 if len(w) < 9 else 2)
            if not hits or (len(hits) > 1 and hits[1][1] == hits[0][1]):
                return m.group(0)
            fixes.append((m.group(0), hits[0][0]))
            return hits[0][0]

        out = re.sub(r"[A-Za-z]+", fix, phrase)
        return out, fixes

    @staticmethod
    def _shares_word(phrase: str, name: str) -> bool:
        """True when the phrase and the relation name share a word (after stemming)."""
        return bool(set(relation_tokens(phrase)) & set(relation_tokens(name.replace("_", " "))))

    def _embedding_relation(self, phrase: str, al: Alignment, present: np.ndarray,
                            qv: np.ndarray | None) -> Alignment:
        """Link a relation phrase that shares no word with any chosen name ("took over" for
        ``acquired``) by the encoder's similarity alone, or refuse.

        The summed reranker score lets a weak cosine plus the "entity takes part in it" prior
        pass the threshold for an unrelated relation, so it is not used here. Instead, with
        ``c`` the cosine of the phrase and a relation name:

        - the best relation over the whole vocabulary is taken when it leads the runner-up by
          :data:`RELATION_EMBED_MARGIN` and reaches :data:`RELATION_EMBED_FLOOR`;
        - otherwise, among the relations the known entities take part in, the best one is taken
          when it is within :data:`RELATION_EMBED_EPS` of the global best (no relation the
          entities do not take part in is clearly closer: that one would give "no events"),
          reaches the floor and leads the next such relation by
          :data:`RELATION_EMBED_PRESENT_MARGIN` (or is the only one).

        Anything else is a "no match" naming the closest names (the caller abstains).
        """
        assert self.min_score is not None
        if qv is None:
            qv = self.index.encoder.encode([phrase])[0]
        cos = self.relations.vectors @ np.asarray(qv, dtype=np.float32)
        order = np.argsort(-cos, kind="stable")
        names = self.store.relations
        near = [(names[int(i)], round(float(cos[i]), 3)) for i in order[:5]]
        r1 = float(cos[order[0]])
        r2 = float(cos[order[1]]) if len(order) > 1 else -1.0
        pick: int | None = None
        why = ""

        if r1 >= RELATION_EMBED_FLOOR and r1 - r2 >= RELATION_EMBED_MARGIN:
            pick = int(order[0])
            why = f"runner-up {names[int(order[1])]!r} {r2:.2f}" if len(order) > 1 else ""
        elif present.any():
            pres = [int(i) for i in order if present[i]]
            p1 = float(cos[pres[0]])
            p2 = float(cos[pres[1]]) if len(pres) > 1 else -1.0
            if (p1 >= RELATION_EMBED_FLOOR and p1 >= r1 - RELATION_EMBED_EPS
                    and p1 - p2 >= RELATION_EMBED_PRESENT_MARGIN):
                pick = pres[0]
                why = ("the only relation the entities take part in" if len(pres) == 1 else
                       f"runner-up among the entities' relations {names[pres[1]]!r} {p2:.2f}")
        if pick is None:
            return Alignment(query=phrase, name=al.name, index=al.index, score=min(al.score, self.min_score - 1e-6),
                             candidates=near, how="embedding",
                             note=f"{phrase!r} shares no word with a relation name and its embedding does not "
                                  f"single one out (closest: " + ", ".join(f"{n} {c:.2f}" for n, c in near[:3]) + ")")
        return Alignment(query=phrase, name=names[pick], index=pick, score=self.min_score, candidates=near,
                         how="embedding",
                         note=f"relation {phrase!r} read as {names[pick]!r} by embedding similarity "
                              f"({float(cos[pick]):.2f}" + (f"; {why}" if why else "") + ")")

    # ------------------------------------------------------------------- rows
    def _rows(self, ids: np.ndarray) -> list[dict[str, str]]:
        s = self.store
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids):
            return []
        ents, rels = s.entities, s.relations
        # whole columns for the ids at once (a database-backed store reads them in one go)
        sub, rel, obj = (np.asarray(c[ids]).tolist() for c in (s.subject, s.relation, s.object))
        return [{"head": ents[a], "rel": rels[b], "tail": ents[c], "time": s.time_text(i), "id": str(i)}
                for i, a, b, c in zip(ids.tolist(), sub, rel, obj)]

    @staticmethod
    def _check_filter(begin_time: str, end_time: str, type: str) -> str:  # noqa: A002
        t = str(type).strip().lower().replace(" ", "")
        t = {"in": "in/on", "on": "in/on"}.get(t, t)
        if t not in FILTER_TYPES:
            raise _ArgumentError(f"type must be one of {FILTER_TYPES}, got {type!r}")
        for name, v in (("begin_time", begin_time), ("end_time", end_time)):
            if not isinstance(v, str):
                raise _ArgumentError(f"{name} must be a string (YYYY[-MM[-DD]], '-inf' or 'inf'), got {v!r}")
            try:
                parse_time(v)
            except ChronoRAGError as exc:
                raise _ArgumentError(f"{name}={v!r} is not a time: {exc}") from exc
        return t

    @staticmethod
    def _check_text(**phrases: Any) -> None:
        for name, v in phrases.items():
            if not isinstance(v, str) or not v.strip():
                raise _ArgumentError(f"{name} must be a non-empty string, got {v!r}")

    @staticmethod
    def _check_order(order: str | None, kind: str) -> str:
        if order is None:
            return "latest" if kind == "before" else "earliest"
        o = str(order).strip().lower()
        o = {"last": "latest", "first": "earliest", "desc": "latest", "asc": "earliest"}.get(o, o)
        if o not in ORDERS:
            raise _ArgumentError(f"order must be one of {ORDERS}, got {order!r}")
        return o

    def _usable(self, role: str, al: Alignment) -> Alignment:
        if self.min_score is not None and al.score < self.min_score:
            raise _NoMatch(role, al)
        return al

    def _finish(self, tool: str, ids: np.ndarray, aligned: dict[str, str], t0: float,
                call: str, order: str) -> ToolResult:
        if self._allowed is not None:
            ids = ids[np.isin(ids, self._allowed)]
        ids = ids[np.argsort(self.store.t_lo[ids], kind="stable")]  # rows by start time
        rows = self._rows(ids)
        al = ", ".join(f"{k}={v!r}" for k, v in aligned.items())
        if not rows:
            obs = f"No results found for {call} (aligned to {al})."
        else:
            ordered = rows[::-1] if order == "latest" else rows
            shown = ordered[: self.max_obs_rows]
            lines = [f"({r['head']}, {r['rel']}, {r['tail']}, {r['time']})" for r in shown]
            left = len(rows) - len(shown)
            more = ""
            if left:
                which = "earlier" if order == "latest" else "later"
                more = (f"\n... {left} {which} row(s) left out; narrow the time window or ask "
                        f"order={'earliest' if order == 'latest' else 'latest'!r} to see them")
            obs = (f"{call} aligned to {al}: {len(rows)} result(s), {order} first\n"
                   + "\n".join(lines) + more)
        return ToolResult(tool=tool, observation=obs, rows=rows, aligned=aligned,
                          latency_ms=(time.perf_counter() - t0) * 1000)

    def _error(self, tool: str, exc: Exception, t0: float) -> ToolResult:
        msg = f"Error in {tool}: {exc}"
        return ToolResult(tool=tool, observation=msg, error=str(exc),
                          latency_ms=(time.perf_counter() - t0) * 1000)

    def _no_match(self, tool: str, nm: _NoMatch, call: str, t0: float) -> ToolResult:
        al = nm.alignment
        near = ", ".join(f"{n!r} ({sc:.2f})" for n, sc in al.candidates[:5])
        kind = "relation" if nm.role == "rel" else "entity"
        if al.how == "embedding":
            obs = f"No match for {nm.role}={al.query!r} in {call}: {al.note}. Use one of them or rephrase."
        else:
            obs = (f"No match for {nm.role}={al.query!r} in {call}: no {kind} name is close enough "
                   f"(best score {al.score:.2f} < {self.min_score}). Nearest {kind} names: {near}. "
                   f"Use one of them or rephrase.")
        return ToolResult(tool=tool, observation=obs, aligned={}, error=None,
                          latency_ms=(time.perf_counter() - t0) * 1000)

    # ------------------------------------------------------------------ tools
    def get_time(self, head: str, rel: str, tail: str, order: str | None = None) -> ToolResult:
        """When ``head`` did ``rel`` to ``tail`` (all matching events, by time)."""
        t0 = time.perf_counter()
        call = f"Get_time(head={head!r}, rel={rel!r}, tail={tail!r})"
        try:
            self._check_text(head=head, rel=rel, tail=tail)
            o = self._check_order(order, "in/on")
        except _ArgumentError as exc:
            return self._error("Get_time", exc, t0)
        try:
            self._prefetch((head, tail), rel)
            h = self._usable("head", self.align_entity(head))
            t = self._usable("tail", self.align_entity(tail))
            r = self._usable("rel", self.align_relation(rel, head=h.index, tail=t.index))
        except _NoMatch as nm:
            return self._no_match("Get_time", nm, call, t0)
        ids = self.store.query(subject=h.name, relation=r.name, object=t.name)
        aligned = {"head": h.name, "rel": r.name, "tail": t.name}
        if r.how in ("embedding", "spelling"):
            aligned["rel_note"], aligned["rel_how"] = r.note, r.how
        return self._finish("Get_time", ids, aligned, t0, call, o)

    def get_head_entity(self, tail: str, rel: str, begin_time: str = "-inf", end_time: str = "inf",
                        type: str = "in/on", order: str | None = None,  # noqa: A002
                        exclude: list[str] | None = None) -> ToolResult:
        """Events ``(?, rel, tail)`` passing the temporal condition (heads in ``exclude`` left out)."""
        return self._filtered("Get_head_entity", "tail", tail, rel, begin_time, end_time, type, order, exclude)

    def get_tail_entity(self, head: str, rel: str, begin_time: str = "-inf", end_time: str = "inf",
                        type: str = "in/on", order: str | None = None,  # noqa: A002
                        exclude: list[str] | None = None) -> ToolResult:
        """Events ``(head, rel, ?)`` passing the temporal condition (tails in ``exclude`` left out)."""
        return self._filtered("Get_tail_entity", "head", head, rel, begin_time, end_time, type, order, exclude)

    def _excluded(self, exclude: Any) -> set[int]:
        """Entity ids of the ``exclude`` phrases (each must align, else an argument error)."""
        if exclude is None:
            return set()
        if isinstance(exclude, str):
            exclude = [exclude]
        if not isinstance(exclude, (list, tuple)) or not all(isinstance(x, str) and x.strip() for x in exclude):
            raise _ArgumentError(f"exclude must be a list of entity names, got {exclude!r}")
        out = set()
        for x in exclude:
            al = self.align_entity(x)
            if self.min_score is not None and al.score < self.min_score:
                raise _ArgumentError(f"exclude entry {x!r} matches no entity (nearest: {al.name!r}, {al.score:.2f})")
            out.add(al.index)
        return out

    def _filtered(self, tool: str, role: str, known: str, rel: str, begin_time: str, end_time: str,
                  type: str, order: str | None, exclude: list[str] | None = None) -> ToolResult:  # noqa: A002
        """Shared body of the two entity tools; ``role`` is the known entity's side."""
        t0 = time.perf_counter()
        call = (f"{tool}({role}={known!r}, rel={rel!r}, begin_time={begin_time!r}, "
                f"end_time={end_time!r}, type={type!r})")
        try:
            self._check_text(**{role: known, "rel": rel})
            kind = self._check_filter(begin_time, end_time, type)
            o = self._check_order(order, kind)
            drop = self._excluded(exclude)
        except _ArgumentError as exc:
            return self._error(tool, exc, t0)
        try:
            self._prefetch((known,), rel)
            e = self._usable(role, self.align_entity(known))
            r = self._usable("rel", self.align_relation(rel, **{role: e.index}))
        except _NoMatch as nm:
            return self._no_match(tool, nm, call, t0)
        side = {"subject": e.name} if role == "head" else {"object": e.name}
        try:
            ids = self.store.query(relation=r.name, begin_time=begin_time, end_time=end_time, type=kind, **side)
        except ChronoRAGError as exc:  # a window that ends before it begins
            return self._error(tool, exc, t0)
        aligned = {role: e.name, "rel": r.name}
        if r.how in ("embedding", "spelling"):
            aligned["rel_note"], aligned["rel_how"] = r.note, r.how
        if drop:
            other = self.store.object if role == "head" else self.store.subject
            ids = ids[~np.isin(other[ids], np.fromiter(drop, dtype=np.int64))]
            aligned["exclude"] = ", ".join(sorted(self.store.entities[i] for i in drop))
        return self._finish(tool, ids, aligned, t0, call, o)

    # ------------------------------------------------------- aggregate tools
    def count_events(self, rel: str, head: str | None = None, tail: str | None = None,
                     begin_time: str = "-inf", end_time: str = "inf", type: str = "in/on") -> ToolResult:  # noqa: A002
        """How many events ``(head, rel, tail)`` pass the window (an open side counts every entity).

        The observation gives the event count and the number of distinct entities on
        the open side; ``rows`` holds every matching event.
        """
        t0 = time.perf_counter()
        call = (f"Count_events(head={head!r}, rel={rel!r}, tail={tail!r}, begin_time={begin_time!r}, "
                f"end_time={end_time!r}, type={type!r})")
        try:
            self._check_text(rel=rel)
            if head is None and tail is None:
                raise _ArgumentError("give head, tail or both")
            for name, v in (("head", head), ("tail", tail)):
                if v is not None:
                    self._check_text(**{name: v})
            kind = self._check_filter(begin_time, end_time, type)
        except _ArgumentError as exc:
            return self._error("Count_events", exc, t0)
        try:
            self._prefetch(tuple(x for x in (head, tail) if x is not None), rel)
            h = self._usable("head", self.align_entity(head)) if head is not None else None
            t = self._usable("tail", self.align_entity(tail)) if tail is not None else None
            r = self._usable("rel", self.align_relation(rel, head=h.index if h else None,
                                                        tail=t.index if t else None))
        except _NoMatch as nm:
            return self._no_match("Count_events", nm, call, t0)
        try:
            ids = self.store.query(subject=h.name if h else None, relation=r.name, object=t.name if t else None,
                                   begin_time=begin_time, end_time=end_time, type=kind)
        except ChronoRAGError as exc:
            return self._error("Count_events", exc, t0)
        if self._allowed is not None:
            ids = ids[np.isin(ids, self._allowed)]
        aligned = {k: v for k, v in (("head", h.name if h else None), ("rel", r.name),
                                     ("tail", t.name if t else None)) if v is not None}
        rows = self._rows(ids)
        open_side = "tail" if t is None else "head" if h is None else None
        distinct = len({r_[open_side] for r_ in rows}) if open_side else None
        al = ", ".join(f"{k}={v!r}" for k, v in aligned.items())
        obs = f"{call} aligned to {al}: {len(rows)} event(s)"
        if distinct is not None:
            obs += f" with {distinct} distinct {open_side} entit{'y' if distinct == 1 else 'ies'}"
        return ToolResult(tool="Count_events", observation=obs + ".", rows=rows, aligned=aligned,
                          latency_ms=(time.perf_counter() - t0) * 1000)

    def rank_entities(self, known: str, known_role: str, rel: str, begin_time: str = "-inf",
                      end_time: str = "inf", type: str = "in/on",  # noqa: A002
                      exclude: list[str] | None = None, by: str = "count") -> ToolResult:
        """Entities on the other side of ``known`` ranked by event count, first or last event.

        ``known_role`` is ``"head"`` or ``"tail"`` (the known entity's side); ``exclude``
        leaves entities out. The observation lists ``name: n events, first .., last ..``
        best first; ``rows`` holds every matching event.
        """
        t0 = time.perf_counter()
        call = (f"Rank_entities(known={known!r}, known_role={known_role!r}, rel={rel!r}, begin_time={begin_time!r}, "
                f"end_time={end_time!r}, type={type!r}, exclude={exclude!r}, by={by!r})")
        if known_role not in ("head", "tail"):
            return self._error("Rank_entities", _ArgumentError(f"known_role must be 'head' or 'tail', got {known_role!r}"), t0)
        if by not in RANK_BY:
            return self._error("Rank_entities", _ArgumentError(f"by must be one of {RANK_BY}, got {by!r}"), t0)
        tool = "Get_tail_entity" if known_role == "head" else "Get_head_entity"
        res = self._filtered(tool, known_role, known, rel, begin_time, end_time, type, None, exclude)
        if res.error is not None or not res.aligned:
            return ToolResult(tool="Rank_entities", observation=res.observation.replace(tool, "Rank_entities", 1),
                              error=res.error, latency_ms=(time.perf_counter() - t0) * 1000)
        other = "tail" if known_role == "head" else "head"
        stats: dict[str, list[Any]] = {}
        for r_ in res.rows:
            t = r_["time"].split("/")[0]
            lo = parse_time(t).lo
            st = stats.setdefault(r_[other], [0, lo, t, lo, t])
            st[0] += 1
            if lo < st[1]:
                st[1], st[2] = lo, t
            if lo > st[3]:
                st[3], st[4] = lo, t
        key = {"count": lambda n: (-stats[n][0], stats[n][1], n), "first": lambda n: (stats[n][1], -stats[n][0], n),
               "last": lambda n: (-stats[n][3], -stats[n][0], n)}[by]
        ranked = sorted(stats, key=key)
        al = ", ".join(f"{k}={v!r}" for k, v in res.aligned.items())
        lines = [f"{n}: {stats[n][0]} event(s), first {stats[n][2]}, last {stats[n][4]}"
                 for n in ranked[: self.max_obs_rows]]
        more = f"\n... {len(ranked) - self.max_obs_rows} more entities" if len(ranked) > self.max_obs_rows else ""
        obs = (f"{call} aligned to {al}: {len(ranked)} {other} entit{'y' if len(ranked) == 1 else 'ies'} "
               f"by {by}\n" + "\n".join(lines) + more) if ranked else f"No results found for {call} (aligned to {al})."
        return ToolResult(tool="Rank_entities", observation=obs, rows=res.rows, aligned=res.aligned,
                          latency_ms=(time.perf_counter() - t0) * 1000)

    def call(self, name: str, args: Any) -> ToolResult:
        """Dispatch a tool call by name (as the agent does).

        ``args`` is a dict, or a JSON object given as a string (some models send that).
        An unknown name, arguments that are not an object, or missing/unexpected
        argument names give a result with ``error`` set (never an exception).
        """
        tools: dict[str, Callable[..., ToolResult]] = {
            "Get_time": self.get_time, "Get_head_entity": self.get_head_entity,
            "Get_tail_entity": self.get_tail_entity, "Count_events": self.count_events,
            "Rank_entities": self.rank_entities}
        fn = tools.get(name)
        if fn is None:
            return ToolResult(tool=str(name), observation=f"Error: unknown tool {name!r}; use one of {list(TOOL_NAMES)}",
                              error="unknown tool")
        if isinstance(args, str):
            args = _json_args(args)
        if not isinstance(args, dict):
            return ToolResult(tool=name, observation=f"Error in {name}: arguments must be a JSON object, got {args!r:.200}",
                              error="bad arguments")
        try:
            return fn(**args)
        except TypeError as exc:  # missing or unexpected argument names
            msg = str(exc).replace(f"{type(self).__name__}.", "").replace("get_", "Get_")
            return ToolResult(tool=name, observation=f"Error in {name}: {msg}", error=msg)


def _validation_message(exc: Exception) -> str:
    """A short message for arguments that fail the tool's schema (sent back to the model)."""
    errs = getattr(exc, "errors", None)
    if callable(errs):
        parts = [f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg')} (got {e.get('input')!r:.80})"
                 for e in errs()]
        return "Error: invalid arguments: " + "; ".join(parts)
    return f"Error: invalid arguments: {exc}"


def _json_args(text: str) -> Any:
    """Arguments sent as a JSON string (possibly encoded twice)."""
    import json

    v: Any = text
    for _ in range(2):
        if not isinstance(v, str):
            break
        try:
            v = json.loads(v)
        except (json.JSONDecodeError, RecursionError):
            return text
    return v


def make_langchain_tools(tools: TemporalKGTools) -> list[Any]:
    """The tools as LangChain ``StructuredTool``s (sync and async).

    Each returns ``(observation, rows)`` with ``response_format="content_and_artifact"``,
    so the ``ToolMessage`` content is the readable observation and its artifact the rows.
    ``type`` and ``order`` are ``Literal`` types (enums in the JSON schema the model
    sees). A bad argument raises ``ToolException``; the tools set
    ``handle_tool_error=True``, so the agent gets a ``ToolMessage`` with
    ``status="error"`` and the message as its content.
    """
    from langchain_core.tools import StructuredTool, ToolException
    from pydantic import BaseModel, Field, create_model

    Kind = Literal["in/on", "before", "after", "between"]  # noqa: N806 - a type
    Order = Literal["earliest", "latest"]  # noqa: N806 - a type
    forder = Field(None, description="which rows the observation lists first when there are many: "
                                     "'earliest' or 'latest' (default: latest for type 'before', else earliest)")

    class GetTimeArgs(BaseModel):
        head: str = Field(description="subject entity, as written in the question")
        rel: str = Field(description="relation phrase, as written in the question")
        tail: str = Field(description="object entity, as written in the question")
        order: Order | None = forder

    window: dict[str, Any] = {
        "rel": (str, Field(description="relation phrase")),
        "begin_time": (str, Field("-inf", description="window start: YYYY[-MM[-DD]] or '-inf'")),
        "end_time": (str, Field("inf", description="window end: YYYY[-MM[-DD]] or 'inf'")),
        "type": (Kind, Field("in/on", description="temporal condition")),
        "order": (Order | None, forder),
        "exclude": (list[str] | None, Field(None, description="entities to leave out of the answers")),
    }
    GetHeadArgs = create_model(  # noqa: N806 - a class
        "GetHeadArgs", tail=(str, Field(description="the known object entity")), **window)
    GetTailArgs = create_model(  # noqa: N806 - a class
        "GetTailArgs", head=(str, Field(description="the known subject entity")), **window)

    Role = Literal["head", "tail"]  # noqa: N806 - a type
    By = Literal["count", "first", "last"]  # noqa: N806 - a type

    class CountArgs(BaseModel):
        rel: str = Field(description="relation phrase")
        head: str | None = Field(None, description="subject entity (leave out to count every subject)")
        tail: str | None = Field(None, description="object entity (leave out to count every object)")
        begin_time: str = Field("-inf", description="window start: YYYY[-MM[-DD]] or '-inf'")
        end_time: str = Field("inf", description="window end: YYYY[-MM[-DD]] or 'inf'")
        type: Kind = Field("in/on", description="temporal condition")  # type: ignore[valid-type]

    class RankArgs(BaseModel):
        known: str = Field(description="the known entity")
        known_role: Role = Field(description="the known entity's side: 'head' (subject) or 'tail' (object)")  # type: ignore[valid-type]
        rel: str = Field(description="relation phrase")
        begin_time: str = Field("-inf", description="window start: YYYY[-MM[-DD]] or '-inf'")
        end_time: str = Field("inf", description="window end: YYYY[-MM[-DD]] or 'inf'")
        type: Kind = Field("in/on", description="temporal condition")  # type: ignore[valid-type]
        exclude: list[str] | None = Field(None, description="entities to leave out")
        by: By = Field("count", description="rank by number of events, first event or last event")  # type: ignore[valid-type]

    def wrap(name: str) -> tuple[Any, Any]:
        def run(**kwargs: Any) -> tuple[str, list[dict[str, str]]]:
            kwargs = {k: v for k, v in kwargs.items() if not (k in ("order", "exclude") and v is None)}
            res = tools.call(name, kwargs)
            if res.error is not None:
                raise ToolException(res.observation)
            return res.observation, res.rows

        async def arun(**kwargs: Any) -> tuple[str, list[dict[str, str]]]:
            import asyncio

            return await asyncio.to_thread(run, **kwargs)

        return run, arun

    specs: list[tuple[str, type[BaseModel], str]] = [
        ("Get_time", GetTimeArgs, "Find when a relation held between a head and a tail entity."),
        ("Get_head_entity", GetHeadArgs,
         "Find head entities that had the relation with a known tail under a time condition."),
        ("Get_tail_entity", GetTailArgs,
         "Find tail entities a known head had the relation with under a time condition."),
        ("Count_events", CountArgs,
         "Count the events of a relation (head, tail or both given) under a time condition."),
        ("Rank_entities", RankArgs,
         "Rank the entities related to a known entity by number of events (or first/last event) in a "
         "time window, leaving out excluded entities: for 'how many', 'most often' and 'other than'."),
    ]
    out = []
    for name, schema, desc in specs:
        run, arun = wrap(name)
        out.append(StructuredTool.from_function(func=run, coroutine=arun, name=name, description=desc,
                                                args_schema=schema, response_format="content_and_artifact",
                                                handle_tool_error=True,
                                                handle_validation_error=_validation_message))
    return out
