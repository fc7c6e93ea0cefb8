"""No-LLM temporal reasoner: question -> tool program -> ranked answers.

1. :func:`chronorag.graphs.question.parse_question` gives the skeleton (target,
   ordinal, temporal constraint, anchor phrase, main clause).
2. :meth:`TemporalReasoner.plan` grounds it: entity mentions in the main clause are
   found against the KG vocabulary (longest spans whose normalised tokens equal an
   entity name's, e.g. "the Thai military" = "Military (Thailand)"; otherwise
   capitalised chunks aligned by the tools' aligner), the relation phrase is what is
   left of the clause once entities and question scaffolding are removed, and the
   known entity's role follows the wording (auxiliary-first "which country did X
   visit" and passive "... by X" make X the head; otherwise X is the tail).
3. :meth:`TemporalReasoner.execute` runs the plan with the same three tools the agent
   uses (``Get_time`` for anchor events and time questions, then
   ``Get_head_entity``/``Get_tail_entity`` with the temporal filter) and ranks the
   answers: first/after -> earliest first; last/before -> latest first; otherwise by
   number of supporting events. When the parsed direction finds nothing, the other
   direction is tried (and the trace says so).

Anchor events ("before X", "after X", "the same month as X") take the anchor's
*earliest* event with the known entity under the same relation.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
import time
from collections.abc import Generator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from chronorag.errors import ArgumentTypeError, ChronoRAGError, ConfigError
from chronorag.graphs.linking import EntityLink, EntityLinker, link_key
from chronorag.graphs.question import _AUX_SUBJ, TemporalQuestion, parse_question
from chronorag.graphs.time import Granularity, minutes_to_iso, parse_time, temporal_mask
from chronorag.workflows.temptool.alignment import acronym, normalise_tokens, relation_tokens
from chronorag.workflows.temptool.tools import TemporalKGTools, ToolResult, _name_fits, role_words

__all__ = ["TemporalReasoner", "ToolPlan", "ReasonerResult"]

_SCAFFOLD = re.compile(
    r"\b(?:who|whom|whose|which|what|when|where|did|does|do|would|will|could|might|was|were|is|are|"
    r"has|have|had|been|be|the|a|an|first|last|earliest|latest|most|recent|recently|time|times|"
    r"country|countries|person|people|one|entity|year|month|day|date|exact|specific|particular|in|"
    r"on|at|for|of|so|to|by|it|that|this|can|you|tell|me|please|initially|finally|ever)\b",
    re.I,
)
# prepositions that make a written time an order's bound ("before 2014"), not a window ("in 2014")
_ORDER_PREPS = {"before", "until", "by", "prior to", "after", "since"}
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u00a0./&-]*")


@dataclass
class ToolPlan:
    """A grounded program over the three tools."""

    question: TemporalQuestion
    target: str
    relation: str
    known: str | None = None
    known_role: str = "tail"  # role of the known entity: "head" or "tail"
    other: str | None = None  # the second entity of a time question
    anchor: str | None = None
    begin_time: str = "-inf"
    end_time: str = "inf"
    type: str = "in/on"
    order: str = "count"  # answer ranking: "first", "last" or "count"
    operator: str = "select"
    exclude: list[str] = field(default_factory=list)
    anchor_note: str = ""
    rel_note: str = ""
    rel_guessed: bool = False  # the relation was linked by embedding similarity alone

    def describe(self) -> str:
        """One line for traces."""
        return (f"op={self.operator} target={self.target} rel={self.relation!r} known={self.known!r}({self.known_role}) "
                f"other={self.other!r} anchor={self.anchor!r} window=({self.begin_time}, {self.end_time}, {self.type})"
                + (f" exclude={self.exclude!r}" if self.exclude else ""))


@dataclass
class ReasonerResult:
    """Ranked answers with the plan and the tool calls that produced them."""

    answers: list[str]
    plan: ToolPlan | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    #: ids of the events the answers were read from
    evidence_ids: list[int] = field(default_factory=list)
    note: str = ""
    latency_ms: float = 0.0
    error: str | None = None
    #: True when the reasoner gives no answer on purpose; ``reason`` says why
    abstained: bool = False
    reason: str = ""
    #: how many leading answers share the top rank ("first", "last", "most often": a tie)
    top: int = 1

    def relation(self) -> tuple[str | None, str | None]:
        """``(phrase, linked)`` of the last tool call that named a relation: the question's
        relation phrase as the reasoner passed it, and the KG relation the aligner linked it
        to (``None`` when it linked none); ``(None, None)`` when no call named a relation."""
        for call in reversed(self.calls):
            args = call.get("arguments")
            if isinstance(args, dict) and args.get("rel"):
                linked = (call.get("aligned") or {}).get("rel")
                return str(args["rel"]), (str(linked) if linked else None)
        return None, None


def _tokens_with_spans(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


class TemporalReasoner:
    """Answer temporal KG questions with the tools and no LLM.

    Parameters
    ----------
    tools : TemporalKGTools
        The tools (and their aligners) over an event index.
    max_span : int
        Longest entity mention considered, in words.
    reference : str, optional
        Reference date (YYYY-MM-DD) for relative dates ("last year"); default: the
        graph's last date (stated in the result's ``reason``).
    retry_inverse : bool
        When the parsed direction finds nothing, try the inverse reading (default
        False; when it answers, ``reason`` says so).
    """

    def __init__(self, tools: TemporalKGTools, *, max_span: int = 10, reference: str | None = None,
                 retry_inverse: bool = False) -> None:
        if not isinstance(tools, TemporalKGTools):
            raise ArgumentTypeError(f"tools must be TemporalKGTools, got {type(tools).__name__}")
        if max_span < 1:
            raise ConfigError(f"max_span must be >= 1, got {max_span}")
        self.tools = tools
        self.max_span = max_span
        self._exact = tools.entities._norm_index
        self.linker = EntityLinker(tools.store.entities)
        self._rel_vocab: set[str] | None = None
        self._qualifiers: dict[tuple[str, ...], int] | None = None
        self._name_vocab: set[str] | None = None
        self._surnames: dict[str, list[str]] | None = None
        self._last_ids: list[str] = []
        self.retry_inverse = bool(retry_inverse)
        st = tools.store
        self.span: tuple[int, int] | None = (int(st.t_lo.min()), int(st.t_hi.max())) if len(st) else None
        if reference is not None:
            parse_question("x", reference=reference)  # fails early on a bad reference date
        self.reference = reference

    # ------------------------------------------------------------ entity spans
    def find_entities(self, text: str) -> list[tuple[int, int, str]]:
        """Entity mentions in ``text``: ``(start, end, entity name)``, left to right (see :meth:`link_entities`)."""
        return self.link_entities(text)[0]

    def link_entities(self, text: str) -> tuple[list[tuple[int, int, str]], list[str]]:
        """Entity mentions in ``text`` and the name-like phrases that could not be linked.

        Longest exact matches of normalised tokens first (case-insensitive: in a
        question typed all in lower case any span may match; otherwise a span needs a
        capitalised word); remaining capitalised chunks are linked typo-tolerantly
        (:class:`~chronorag.graphs.linking.EntityLinker`, with its margin rule), then
        by the embedding aligner (score >= 1.0). A chunk neither accepts is reported
        ("'Emmanuel Macron' is not in the KG (closest: ..., 0.63)"), never dropped.
        A chunk that names only the qualifier of sector names ("Ukraine" for "Women
        (Ukraine)", "Government (Ukraine)", ...) is not read as one of them; a word next
        to it that picks one ("the Hizbul Islam fighter") is (:meth:`_described`).

        A question typed in lower case (capitals only in all-capital words such as
        "CEO") is first read as if capitalised (:meth:`_truecase`: "ecb" -> "ECB",
        "germany" -> "Germany"); its chunks are then linked only by the typo-tolerant
        linker and by acronyms, since a common noun may stand where a capital was
        guessed. Two- and three-word spans are also linked typo-tolerantly there; a chunk
        neither links is reported when all its words are words of KG names ("israel" when
        only "Jew (Israel)" is in the KG), never dropped.
        """
        toks = _tokens_with_spans(text)
        # typed in lower case: no capital after the first word but in all-capital words ("CEO", "ECB")
        lower_q = not any(t[0][:1].isupper() and not t[0].isupper() for t in toks[1:])
        if lower_q:  # read it as if typed with capitals: content words capitalised, acronyms upper-cased
            text = self._truecase(text, toks)
            toks = _tokens_with_spans(text)
        taken = [False] * len(toks)
        found: list[tuple[int, int, str]] = []
        problems: list[str] = []
        unlinked: list[tuple[int, int, str]] = []  # lower case: chunks made of KG name words, not linked
        spans = []
        for i in range(len(toks)):
            for j in range(min(len(toks), i + self.max_span), i, -1):
                words = [t[0] for t in toks[i:j]]
                if not any(w[:1].isupper() or w[:1].isdigit() for w in words):
                    if not lower_q or all(w.lower() in _QWORDS or _SCAFFOLD.fullmatch(w) for w in words):
                        continue
                    if j - i == 1 and len(words[0]) < 4:
                        continue
                key = tuple(sorted(normalise_tokens(" ".join(words))))
                if key and key in self._exact:
                    spans.append((j - i, i, j, key))
        for _, i, j, key in sorted(spans, key=lambda x: (-x[0], x[1])):
            if any(taken[i:j]):
                continue
            for k in range(i, j):
                taken[k] = True
            names = [self.tools.entities.names[x] for x in self._exact[key]]
            if len(names) > 1:  # several names normalise alike: the one written as in the question wins
                same = self.linker.exact(text[toks[i][1]: toks[j - 1][2]])
                names = [same] if same in names else names
            found.append((toks[i][1], toks[j - 1][2], sorted(names)[0]))
        # capitalised chunks not covered: link them typo-tolerantly, then by embedding
        k = 0
        while k < len(toks):
            w = toks[k][0]
            if taken[k] or not (w[:1].isupper() and w.lower() not in _QWORDS):
                k += 1
                continue
            j = k
            while j + 1 < len(toks) and not taken[j + 1] and (
                toks[j + 1][0][:1].isupper() or toks[j + 1][0].lower() in ("of", "the", "and", "for", "de", "al")
            ):
                j += 1
            while j > k and toks[j][0].lower() in ("of", "the", "and", "for"):
                j -= 1
            phrase = text[toks[k][1]: toks[j][2]]
            ands = [x for x in range(k + 1, j) if toks[x][0].lower() == "and"]
            if len(ands) == 1 and "," not in phrase and not lower_q:
                # "Obama and Kerry": two names when each side links on its own to a different name
                # ("Bosnia and Herzegovina", "Finance, Economy, Trade and Industry" stay one)
                lp, rp = text[toks[k][1]: toks[ands[0] - 1][2]], text[toks[ands[0] + 1][1]: toks[j][2]]
                left, right, whole = self._quick_link(lp), self._quick_link(rp), self._quick_link(phrase)
                # ... and the whole chunk's name leaves one side's words out ("Ministry of Defence and
                # Security" is one name: its link has "security" in it)
                covers = whole is not None and all(set(normalise_tokens(whole)) & set(normalise_tokens(x))
                                                   for x in (lp, rp))
                if left is not None and right is not None and left != right and not covers:
                    j = ands[0] - 1
                    phrase = text[toks[k][1]: toks[j][2]]
            link = self.linker.link(phrase)
            respelt = link.linked and self._respelt_name_word(phrase, link)
            if link.linked and not respelt:
                assert link.name is not None
                found.append((toks[k][1], toks[j][2], link.name))
            elif (sur := self._surname(phrase)) is not None:
                found.append((toks[k][1], toks[j][2], sur))  # "Merkel", "lavrov": one person's surname
            elif self._relation_words(phrase):
                pass  # "appoint as CEO": words of the KG's relation names, not a missing entity
            elif k == 0 and j == 0 and not lower_q:
                pass  # one capitalised word opening the sentence: capitalised by orthography
            elif lower_q:
                # capitalised by _truecase, not by the user: a common word ("protesters") may stand
                # here, so only the typo-tolerant linker (with its margin rule) and acronyms link it
                al = self.tools.align_entity(phrase) if re.fullmatch(r"[A-Z]{2,6}", phrase) else None
                if al is not None and al.score >= 1.0 and self._contained(phrase, al.name):
                    found.append((toks[k][1], toks[j][2], al.name))
                else:  # left to the typo-tolerant spans below; reported if they do not link it either
                    # (a one-word text is a phrase handed over for linking, "germany" as an anchor: its
                    # caller falls back to the aligner, which a report here would pre-empt)
                    if len(toks) > 1 and (all(w in self._name_words() for w in normalise_tokens(phrase))
                                          or self._near_name(phrase, link)):
                        # words of KG names ("israel") or a near miss of one ("chnia"): a name, not a
                        # common word, so it is reported rather than read as part of the relation
                        unlinked.append((k, j, link.reason))
                    k = j + 1
                    continue
            else:
                al = self.tools.align_entity(phrase)
                if (got := self._described(text, toks, k, j, taken, direct_only=True)) is not None:
                    found.append(got)  # "the African media": the sector named by its head, not "African Union"
                elif al.score >= 1.0 and self._contained(phrase, al.name):
                    found.append((toks[k][1], toks[j][2], al.name))
                elif (got := self._described(text, toks, k, j, taken)) is not None:
                    found.append(got)  # "the Hizbul Islam fighter": the word next to the name picks the sector
                elif al.score >= 1.0 and _other_kind(phrase, al.name):
                    problems.append(f"{phrase!r} is not in the KG: the KG name holding it, {al.name!r}, "
                                    "names something else")
                elif respelt:
                    holders = sorted(set.intersection(*(self._names_by_word[w] for w in set(normalise_tokens(phrase)))))
                    problems.append(f"{phrase!r} is not in the KG: it is part of {', '.join(map(repr, holders[:3]))} "
                                    f"and close to {link.name!r}; write the full name")
                elif (role := _ROLE_AFTER.match(text[toks[j][2]:])) is not None:
                    # "the Indian military" is the KG's "Military Personnel (India)"; "the German
                    # chancellor" is refused for the title it lacks, not for the word "German"
                    whole = text[toks[k][1]: toks[j][2] + role.end()].strip()
                    body, near = self._body_named(whole)
                    if body is not None:
                        found.append((toks[k][1], toks[j][2] + role.end(), body))
                    else:
                        problems.append(f"{whole!r} is not in the KG" + (f" (closest: {near!r})" if near else "")
                                        + "; name the person or the body")
                else:
                    problems.append(link.reason)
            for x in range(k, j + 1):
                taken[x] = True
            k = j + 1
        if lower_q:  # typos in a lower-case question: two- and three-word spans
            for size in (3, 2):
                for i in range(len(toks) - size + 1):
                    if any(taken[i:i + size]):
                        continue
                    words = [t[0] for t in toks[i:i + size]]
                    if any(w.lower() in _QWORDS or _SCAFFOLD.fullmatch(w) for w in words):
                        continue
                    link = self.linker.link(" ".join(words), threshold=90.0)
                    if link.linked:
                        assert link.name is not None
                        found.append((toks[i][1], toks[i + size - 1][2], link.name))
                        for x in range(i, i + size):
                            taken[x] = True
            problems += [why for a, b, why in unlinked if not any(taken[a:b + 1])]
        return sorted(found), problems

    @staticmethod
    def _relation_start(main: str, ents: list[tuple[int, int, str]]) -> int | None:
        """Offset of the first word of ``main`` that is neither an entity nor question scaffolding."""
        for m in _WORD.finditer(main):
            if any(a <= m.start() < b for a, b, _ in ents):
                continue
            w = m.group(0)
            if _SCAFFOLD.fullmatch(w) or w.lower() in _QWORDS or w.lower() in _ANSWER_NOUNS:
                continue
            return m.start()
        return None

    def _relation_words(self, phrase: str) -> bool:
        """True when every word of ``phrase`` is a word of some relation name of the KG."""
        if self._rel_vocab is None:
            self._rel_vocab = {relation_tokens(w)[0] for r in self.tools.store.relations
                               for w in re.findall(r"[A-Za-z]+", r) if relation_tokens(w)}
        toks = relation_tokens(phrase)
        return bool(toks) and all(t in self._rel_vocab for t in toks)

    def _body_named(self, phrase: str) -> tuple[str | None, str]:
        """The KG body a country-and-role phrase names, and the closest name: "the Thai military" is
        "Military Personnel (Thailand)" (a sector whose words fit the phrase, adding at most a group
        noun; not "Customs Official (Thailand)" for "Thailand's officials"); ``(None, closest)``
        otherwise."""
        al = self.tools.align_entity(phrase)
        extra = set(normalise_tokens(al.name)) - set(normalise_tokens(role_words(phrase)))
        fits = al.score >= 1.0 and "(" in al.name and _name_fits(phrase, al.name) and extra <= _GROUP_WORDS
        return (al.name if fits else None), al.name

    def _surname(self, phrase: str) -> str | None:
        """The one person-like name (two to four words, no qualifier in brackets, no "of") whose last
        word is the one-word ``phrase`` ("Merkel" -> Angela Merkel); ``None`` otherwise.
        "Paris" is not "Paris Club", nor "Cameron" "Cameron Slater": only a last word counts, of
        the one name the word occurs in."""
        key = link_key(phrase)
        if " " in key or len(key) < 4 or key in _QWORDS or key in _FUNCTION_WORDS or self._relation_words(phrase):
            return None
        if self._surnames is None:
            uses: dict[str, list[str]] = {}  # every name each word occurs in
            for n in self.tools.store.entities:
                for w in set(link_key(n).split()):
                    uses.setdefault(w, []).append(n)
            self._surnames = {w: ns for w, ns in uses.items() if len(ns) == 1}
        # the word occurs in one name only, as its last word, and that name looks like a person's:
        # "Philippines" (in "University of the Philippines" and many "(Philippines)") is no surname
        names = self._surnames.get(key, [])
        if len(names) != 1:
            return None
        words = link_key(names[0]).split()
        person = ("(" not in names[0] and 2 <= len(words) <= 4 and words[-1] == key
                  and not {"of", "the", "and", "for"} & set(words))
        return names[0] if person else None

    def _quick_link(self, phrase: str) -> str | None:
        """The name a capitalised chunk links to (typo-tolerant linker, else the aligner at score
        >= 1.0 with the name's words in the phrase), or ``None``."""
        link = self.linker.link(phrase)
        if link.linked and not self._respelt_name_word(phrase, link):
            return link.name
        al = self.tools.align_entity(phrase)
        return al.name if al.score >= 1.0 and self._contained(phrase, al.name) else None

    def _converse(self, main: str, ents: list[tuple[int, int, str]]) -> str | None:
        """The relation phrase of a "receive/get/have <action> from X" question, else ``None``.

        "Who received a visit from Obama?", "Did Ukraine get threats from Russia?": the action's
        doer is X, so the caller swaps the roles. Not when the KG has a relation named for the
        receiving itself ("Receive inspectors" for "received inspectors from the IAEA").
        """
        m = _CONVERSE.search(main)
        if m is None or not any(re.fullmatch(r"\s*(?:the\s+)?", main[m.end(): a]) for a, _, _ in ents):
            return None
        noun = relation_tokens(m.group("noun"))
        if not noun or set(noun) & self._received_words:
            return None
        return m.group("noun")

    @functools.cached_property
    def _received_words(self) -> set[str]:
        """The words after "Receive" in the KG's relation names ("inspectors" of "Receive inspectors")."""
        receive = relation_tokens("receive")[0]
        return {t for rel in self.tools.store.relations
                for toks in [relation_tokens(rel)] if toks and toks[0] == receive for t in toks[1:]}

    def _near_name(self, phrase: str, link: EntityLink) -> bool:
        """A lower-case chunk that misses a KG name by a typo or two ("chnia" for China): its
        closest name scores >= 0.8 and it is no word of a relation name, of the question's
        scaffolding or of the KG's names."""
        words = [w.lower() for w in re.findall(r"[A-Za-z]+", phrase)]
        if not words or self._relation_words(phrase) or any(
                w in _FUNCTION_WORDS or w in _ANSWER_NOUNS or w in _QWORDS for w in words):
            return False
        if link.score >= 0.8 and len("".join(words)) >= 5:  # "made" is near "Madhes" but a verb
            return True
        # one word a typo away from a word of the KG's names ("hungray": "Citizen (Hungary)")
        from rapidfuzz import fuzz, process

        key = normalise_tokens(phrase)
        return len(words) == 1 and len(words[0]) >= 5 and len(key) == 1 and process.extractOne(
            key[0], self._name_words(), scorer=fuzz.ratio, score_cutoff=85) is not None

    def _respelt_name_word(self, phrase: str, link: EntityLink) -> bool:
        """True when a typo-tolerant link respells a phrase that a KG name holds as written: "Cameron"
        is a word of "Cameron Slater", so it is no typo of "Cameroon" ("Bangladesh Navy" is in no
        name as written, so "Naval (Bangladesh)" stands)."""
        words = set(normalise_tokens(phrase))
        if link.score >= 1.0 or not words or words <= set(normalise_tokens(link.name or "")):
            return False
        holders = set.intersection(*(self._names_by_word.get(w, set()) for w in words))
        return bool(holders)

    @functools.cached_property
    def _names_by_word(self) -> dict[str, set[str]]:
        """Every KG name each normalised word occurs in."""
        out: dict[str, set[str]] = {}
        for n in self.tools.store.entities:
            for w in normalise_tokens(n):
                out.setdefault(w, set()).add(n)
        return out

    def _name_words(self) -> set[str]:
        """Every normalised word of the KG's entity names (built once)."""
        if self._name_vocab is None:
            self._name_vocab = {w for key in self._exact for w in key}
        return self._name_vocab

    def _not_a_name_word(self, w: str) -> bool:
        """A question, function, time or relation word: never part of a name ("who", "than", "may", "visit")."""
        lw = w.lower()
        return (lw in _QWORDS or lw in _FUNCTION_WORDS or lw in _MONTH_WORDS or _SCAFFOLD.fullmatch(w) is not None
                or self._relation_words(w))

    def _truecase(self, text: str, toks: list[tuple[str, int, int]]) -> str:
        """``text`` (typed in lower case) with the capitals a careful writer would give it.

        Content words are capitalised and a word that is the acronym of a KG name is
        upper-cased ("ecb" -> "ECB"); question words, function words, relation words of
        the KG, dates and month names stay as typed. Offsets are unchanged.
        """
        acr = self.tools.entities._acronyms
        chars = list(text)
        for w, s, e in toks:
            if not w[:1].isalpha() or self._not_a_name_word(w):
                continue
            up = w.upper()
            repl = up if 2 <= len(w) <= 6 and up in acr else w[:1].upper() + w[1:]
            if len(repl) == len(w):
                chars[s:e] = repl
        return "".join(chars)

    def _described(self, text: str, toks: list[tuple[str, int, int]], k: int, j: int,
                   taken: list[bool], *, direct_only: bool = False) -> tuple[int, int, str] | None:
        """The qualified name meant by the chunk ``toks[k..j]`` and a word next to it, if any.

        "the Hizbul Islam fighter" -> "Combatant (Hizbul Islam)": the chunk names only the
        qualifier, shared by several names; the lower-case word after it (or before it,
        "police of Kenya") is aligned with it, and the result is kept when its qualifier is
        the chunk. A name whose head is the word and whose qualifier is the chunk, up to a
        demonym ending ("the African media" -> "Media (Africa)") or, for a spelling no KG name
        uses, a typo ("the citizens of Surinam" -> "Citizen (Suriname)"), is read directly (with
        ``direct_only``, only that). Question, function and relation words are not descriptors.
        """
        chunk = normalise_tokens(text[toks[k][1]: toks[j][2]])

        def descriptor(x: int) -> bool:
            w = toks[x][0]
            return not taken[x] and w.isalpha() and w.islower() and not self._not_a_name_word(w)

        tries = []
        if j + 1 < len(toks) and descriptor(j + 1):
            tries.append((toks[k][1], toks[j + 1][2]))
        b = k - 1
        while b >= 0 and toks[b][0].lower() in ("of", "the"):
            b -= 1
        if b >= 0 and b < k - 1 and descriptor(b):  # "police of Kenya"
            tries.append((toks[b][1], toks[j][2]))
        for s, e in tries:
            # the descriptor is the name's head ("the African media" -> "Media (Africa)"): read directly
            desc = normalise_tokens(text[s:e].replace(text[toks[k][1]: toks[j][2]], " "))
            direct = [n for n, head, qual in self._qualified_names
                      if _same_words(desc, head) and _same_words(chunk, qual)]
            if not direct and not all(w in self._name_words() for w in chunk):  # "Surinam": a spelling no
                direct = [n for n, head, qual in self._qualified_names  # name uses, read up to a typo
                          if _same_words(desc, head) and _same_words(chunk, qual, typo=True)]
            if len(direct) == 1:
                return s, e, direct[0]
            if direct_only:
                continue
            al = self.tools.align_entity(text[s:e])
            m = _QUALIFIED.fullmatch(al.name)
            if al.score >= 1.0 and m is not None and _same_words(chunk, normalise_tokens(m.group(2))):
                return s, e, al.name
        return None

    @functools.cached_property
    def _qualified_names(self) -> list[tuple[str, list[str], list[str]]]:
        """``(name, head words, qualifier words)`` of every qualified KG name ("Media (Africa)")."""
        out = []
        for n in self.tools.store.entities:
            m = _QUALIFIED.fullmatch(n)
            if m is not None and m.group(1):
                out.append((n, normalise_tokens(m.group(1)), normalise_tokens(m.group(2))))
        return out

    def _qualifier_only(self, phrase: str, name: str) -> bool:
        """True when ``phrase`` names only the qualifier of ``name`` and that qualifier is shared.

        ICEWS-style names qualify a sector by its country or group: "Women (Ukraine)",
        "Government (Ukraine)", ... A bare "Ukraine" reads as none of them in particular
        (and the country itself may not be in the KG), so picking one would be a guess.
        A qualifier that only one name carries ("Combatant (Hizbul Islam)") stays a
        reading of the bare phrase ("the Hizbul Islam fighter").
        """
        m = _QUALIFIED.fullmatch(name)
        if m is None or not m.group(1):
            return False
        head = normalise_tokens(m.group(1))
        words = normalise_tokens(phrase)
        if not words or any(_word_in(w, head) for w in words):
            return False
        if self._qualifiers is None:
            counts: dict[tuple[str, ...], int] = {}
            for n in self.tools.store.entities:
                q = _QUALIFIED.fullmatch(n)
                if q is not None and q.group(1):
                    key = tuple(sorted(normalise_tokens(q.group(2))))
                    counts[key] = counts.get(key, 0) + 1
            self._qualifiers = counts
        return self._qualifiers.get(tuple(sorted(normalise_tokens(m.group(2)))), 0) > 1

    def _contained(self, phrase: str, name: str) -> bool:
        """A partial proper name must be part of the name: every word of ``phrase`` matches
        a word of ``name`` (normalised, typo-tolerant), so "Merkel" links to "Angela Merkel"
        but "Volodymyr Zelenskyy" not to "Volodymyr Konstantynov". Descriptions with
        function words ("Foreign Minister of India") are left to the aligner's score."""
        if self._qualifier_only(phrase, name) or _other_kind(phrase, name):
            return False
        if re.search(r"\b(?:of|the|for|and|de|al|in|on)\b|,", phrase):
            return True
        if re.fullmatch(r"[A-Z]{2,6}", phrase.strip()) and acronym(name) == phrase.strip():
            return True  # "ECB" for "European Central Bank"  # a description ("Foreign Minister of India"), not a proper name: the aligner decides
        have = normalise_tokens(name)
        return all(_word_in(w, have) for w in normalise_tokens(phrase))

    def _anchor_entity(self, phrase: str) -> tuple[str | None, str]:
        ents, problems = self.link_entities(phrase)
        if ents:
            return max(ents, key=lambda e: e[1] - e[0])[2], ""
        if problems:
            return None, problems[0]
        al = self.tools.align_entity(phrase)
        if al.score >= 1.0 and not self._qualifier_only(phrase, al.name) and not _other_kind(phrase, al.name):
            return al.name, ""
        return None, f"the anchor {phrase!r} is not an entity of the KG (closest: {al.name}, {al.score:.2f})"

    def _link_one(self, phrase: str) -> tuple[str | None, str]:
        link = self.linker.link(phrase)
        if link.linked:
            return link.name, ""
        ents, _ = self.link_entities(phrase)
        if len(ents) == 1:
            return ents[0][2], ""
        return None, link.reason

    # ------------------------------------------------------------------ plan
    def plan(self, question: str | TemporalQuestion) -> ToolPlan | None:
        """Ground a question into a :class:`ToolPlan`; ``None`` when it has no usable form."""
        return self.plan_or_reason(question)[0]

    def plan_or_reason(self, question: str | TemporalQuestion) -> tuple[ToolPlan | None, str]:
        """Ground a question; ``(None, why)`` when it cannot be planned faithfully."""
        q = question if isinstance(question, TemporalQuestion) else self.parse(question)
        main = q.main
        ents, problems = self.link_entities(main)
        if problems:
            return None, "; ".join(problems)
        if not ents:
            return None, "question form not understood: no entity of the KG found in the question"
        for k, (s_, e_, ent_name) in enumerate(ents):  # "the Thai military", "Merkel's government": a role after a name
            m = _ROLE_AFTER.match(main[e_:])
            if not m or "(" in ent_name or set(normalise_tokens(m.group(1))) <= set(normalise_tokens(ent_name)):
                continue  # (a sector name already names a body: "Foreign Affairs (India)" for "the Indian foreign minister")
            phrase = re.sub(r"^(?:(?:with|of|from|to|by|for|about|against)\s+)?(?:the\s+)?", "",
                            main[s_:e_ + m.end()].strip(), flags=re.I)
            body, near = self._body_named(phrase)
            if body is not None:
                ents[k] = (s_, e_ + m.end(), body)
                continue
            closest = f" (closest: {near!r})" if "(" in near else ""
            return None, (f"{phrase!r} is not in the KG: it has {ent_name!r}, but no name for its "
                          f"{m.group(1).lower()}{closest}; name the person or the body")
        rel_text = main
        for s, e, _ in sorted(ents, reverse=True):
            rel_text = rel_text[:s] + " " + rel_text[e:]
        rel_text = re.sub(r"\b(?:which|what)\s+[A-Za-z]+", " ", rel_text, flags=re.I)  # the answer type
        rel_text = re.sub(r"\b(?:the\s+)?names?\s+of\b|\bones?\b", " ", rel_text, flags=re.I)  # "the name of the one"
        rel_text = re.sub(r"[()\[\]]", " ", rel_text)  # brackets left by a name like "Armed Rebel (Turkish Kurds)"
        rel_text = re.sub(r"\s+", " ", _SCAFFOLD.sub(" ", rel_text)).strip(" ,.?")
        if not rel_text:
            return None, "no relation phrase left in the question once its entities are removed"
        plan = ToolPlan(question=q, target=q.target, relation=rel_text, operator=q.operator)
        for ex in q.exclude:
            name, why = self._link_one(ex)
            if name is None:
                return None, f"cannot apply the exclusion: {why}"
            plan.exclude.append(name)
        by_whom = bool(re.search(r"\bby\s+whom\b", q.text, re.I))
        two = q.target == "time" or (q.operator in ("exists", "count") and not q.count_distinct and len(ents) >= 2)
        if two:
            if len(ents) < 2:
                return None, "a time question needs two entities; found " + ", ".join(e[2] for e in ents)
            first, second = ents[0][2], ents[-1][2]
            if q.passive and not by_whom:
                first, second = second, first
            plan.known, plan.other, plan.known_role = first, second, "head"
            if q.target != "time":
                plan.target = "pair"
        else:
            if q.passive and by_whom:
                known, role = ents[0], "tail"  # "by whom was X criticised": X received it
            elif q.passive:
                by = [e for e in ents if re.search(r"\bby\s+(?:the\s+)?$", main[: e[0]], re.I)]
                known, role = (by[0] if by else ents[-1]), "head"
            else:
                # "which country did X visit": X right after the auxiliary is the subject
                m = _AUX_SUBJ.search(main) if q.subject_cue else None
                head_cue = m is not None and re.fullmatch(r"\s*(?:the\s+)?", main[m.end(): ents[0][0]] or "") is not None
                if not head_cue and len(ents) == 1:
                    # active voice, subject-verb-object: an entity written before the relation's
                    # words is its subject ("who was the first one X slammed", "X visited whom")
                    verb = self._relation_start(main, ents)
                    head_cue = verb is not None and verb >= ents[0][1]
                known, role = (ents[0] if head_cue else ents[-1]), ("head" if head_cue else "tail")
            plan.known, plan.known_role = known[2], role
        conv = None if q.passive else self._converse(main, ents)
        if conv is not None:
            # "Who received criticism from China?" asks whom China criticised: the name after "from"
            # is the doer, and the relation is the noun ("criticism"), not "receive"
            plan.relation = conv
            if plan.other is not None:
                plan.known, plan.other = plan.other, plan.known
            else:
                plan.known_role = "head" if plan.known_role == "tail" else "tail"
        dropped = list(dict.fromkeys(e[2] for e in ents if e[2] not in (plan.known, plan.other)
                                     and not _rest_of_name(main, e, ents, (plan.known, plan.other))))
        if dropped:
            # "Did Obama meet Merkel and Hollande?", "Who did HRW condemn in Ethiopia?": one plan
            # holds a known entity (and, for yes/no, counts and times, a second); a further name
            # would be silently ignored
            used = [x for x in (plan.known, plan.other) if x]
            return None, (f"cannot represent: the question names {', '.join(repr(e) for e in dropped)} besides "
                          f"{' and '.join(repr(u) for u in used)}, and one lookup uses only "
                          f"{'these two' if len(used) == 2 else 'that one'}; ask about each name separately")
        if q.ordinal == "first" or (q.constraint == "after" and not q.ordinal):
            plan.order = "first"
        elif q.ordinal == "last" or (q.constraint == "before" and not q.ordinal):
            plan.order = "last"
        if q.operator in ("most_frequent", "count"):
            plan.order = "count"
        if q.anchor:
            name, why = self._anchor_entity(q.anchor)
            if name is None:
                return None, why
            plan.anchor = name
        if q.anchor is not None and q.times:
            # "before X in 2014": the anchor sets the order, the written time is the window that
            # both the anchor event and the answers must fall in (``_anchor_time``, ``_window_for``)
            if len(q.times) > 2 or any(t.prep in _ORDER_PREPS for t in q.times):
                return None, (f"cannot represent: the anchor '{q.anchor}' together with the time(s) "
                              + ", ".join(repr(t.text) for t in q.times))
            plan.begin_time, plan.end_time = str(q.times[0].point), str(q.times[-1].point)
            plan.type = "in/on" if len(q.times) == 1 else "between"
        elif q.window is not None:
            plan.begin_time, plan.end_time, plan.type = q.window
        elif q.constraint == "in":
            t = q.times[0].point
            plan.begin_time = plan.end_time = str(t)
        elif q.constraint == "between" and len(q.times) >= 2:
            plan.begin_time, plan.end_time, plan.type = str(q.times[0].point), str(q.times[1].point), "between"
        elif q.constraint in ("before", "after") and q.times and q.anchor is None:
            if q.offset is not None:
                plan.begin_time, plan.end_time, plan.type = _offset_window(q.times[0].point.lo, q.offset)
            elif q.constraint == "before":
                plan.end_time, plan.type = str(q.times[0].point), "before"
            else:
                plan.begin_time, plan.type = str(q.times[0].point), "after"
        return plan, ""

    # --------------------------------------------------------------- execute
    def _call(self, calls: list[dict[str, Any]], plan: ToolPlan, name: str,
              **args: Any) -> Generator[dict[str, Any], ToolResult, ToolResult]:
        res = yield {"name": name, "arguments": args}
        if res.rows and name != "Get_time" or (name == "Get_time" and plan.target in ("time", "pair")):
            self._last_ids = [r["id"] for r in res.rows if "id" in r]
        if res.aligned.get("rel_note"):
            plan.rel_note = res.aligned["rel_note"]
            plan.rel_guessed = res.aligned.get("rel_how") == "embedding"
        if res.aligned.get("rel") and res.rows:
            # later calls reuse the relation this call resolved (as an agent reuses observations)
            plan.relation = res.aligned["rel"]
        calls.append({"name": name, "arguments": args, "n_rows": len(res.rows),
                      "aligned": res.aligned, "error": res.error})
        return res

    def _anchor_time(self, calls: list[dict[str, Any]], plan: ToolPlan,
                     role: str) -> Generator[dict[str, Any], ToolResult, tuple[str | None, ToolResult]]:
        """Earliest event of the anchor with the known entity. "Before China" does not say
        who acted on whom, so the anchor's event is looked up in the answers' direction
        first, then in the other (``plan.anchor_note`` records it)."""
        pairs = [(plan.anchor, plan.known), (plan.known, plan.anchor)]
        if role != "tail":  # answers are tails: the anchor is a tail too
            pairs = pairs[::-1]
        res = None
        scope = self._scope(plan)
        for k, (h, t) in enumerate(pairs):
            res = yield from self._call(calls, plan, "Get_time", head=h, rel=plan.relation, tail=t)
            starts = [(parse_time(x), x) for x in (r["time"].split("/")[0] for r in res.rows)]
            if scope is not None:  # "before X in 2014": X's event in 2014
                starts = [(p, x) for p, x in starts if p.lo < scope[1] and p.hi > scope[0]]
            if starts:
                if k:
                    plan.anchor_note = (f"the anchor event exists only as ({h}, {res.aligned.get('rel')}, {t}); "
                                        f"the question is read in that direction")
                return min(starts, key=lambda px: px[0].lo)[1], res
            if not res.aligned:
                break
        assert res is not None
        return None, res

    @staticmethod
    def _scope(plan: ToolPlan) -> tuple[int, int] | None:
        """The written time window of an anchor question ("before X *in 2014*") in minutes, or ``None``."""
        if plan.anchor is None or (plan.begin_time, plan.end_time) == ("-inf", "inf"):
            return None
        return parse_time(plan.begin_time).lo, parse_time(plan.end_time).hi

    def _relation_doubt(self, plan: ToolPlan, res: ToolResult) -> str:
        """Why a negative answer (0, "no") cannot be trusted: the relation was linked only loosely."""
        rel = res.aligned.get("rel")
        if rel is None:
            return ""
        if plan.rel_guessed and self._any_event(plan, res):  # linked by embedding similarity alone
            return (f"no events of {rel!r} found, but the question's relation was linked by embedding only "
                    f"({plan.rel_note}); a '0' or 'no' would rest on that guess")
        al = self.tools.align_relation(plan.relation)
        if al.score >= 1.0:
            return ""
        return (f"no events of {rel!r} found, but the question's relation {plan.relation!r} matches it only "
                f"loosely ({al.score:.2f}); a '0' or 'no' would rest on that guess")

    def _any_event(self, plan: ToolPlan, res: ToolResult) -> bool:
        """True when the known entities have *any* event, of any relation, in the question's window
        (same sides as the tool call). When they have none, "0" or "no" holds whatever relation was
        meant, so a loosely linked relation does not matter."""
        st = self.tools.store
        side: dict[str, str] = {}
        for role, key in (("head", "subject"), ("tail", "object")):
            name = res.aligned.get(role)
            if name is not None:
                side[key] = name
        if not side:
            return True
        try:
            ids = st.query(begin_time=plan.begin_time, end_time=plan.end_time, type=plan.type, **side)
        except ChronoRAGError:  # an unusable window: keep the doubt
            return True
        if self.tools._allowed is not None:
            ids = ids[np.isin(ids, self.tools._allowed)]
        return len(ids) > 0

    @staticmethod
    def _abstain(plan: ToolPlan | None, calls: list[dict[str, Any]], reason: str) -> ReasonerResult:
        return ReasonerResult(answers=[], plan=plan, calls=calls, note=reason, abstained=True, reason=reason)

    def _window_for(self, plan: ToolPlan, t: str | None) -> dict[str, str]:
        q = plan.question
        window = {"begin_time": plan.begin_time, "end_time": plan.end_time, "type": plan.type}
        if t is None:
            return window
        if q.offset is not None:
            b, e, k = _offset_window(parse_time(t).lo, q.offset)
            return {"begin_time": b, "end_time": e, "type": k}
        scoped = self._scope(plan) is not None  # the anchor lies inside the written window
        if q.constraint == "before":
            return {"begin_time": plan.begin_time if scoped else "-inf", "end_time": t, "type": "before"}
        if q.constraint == "after":
            return {"begin_time": t, "end_time": plan.end_time if scoped else "inf", "type": "after"}
        tp = parse_time(t)  # same day/month/year
        same = Granularity.DAY if q.same_granularity is None else q.same_granularity
        tt = minutes_to_iso(tp.lo, min(same, tp.granularity))
        return {"begin_time": tt, "end_time": tt, "type": "in/on"}

    def steps(self, plan: ToolPlan) -> Generator[dict[str, Any], ToolResult, ReasonerResult]:
        """The plan as a step-by-step program.

        A generator: it yields each tool call (``{"name", "arguments"}``), must be sent
        that call's :class:`ToolResult`, and returns the :class:`ReasonerResult`. This
        is how the LangGraph agent runs the program one call at a time through its tool
        node; :meth:`execute` drives it with the tools directly.
        """
        calls: list[dict[str, Any]] = []
        q = plan.question
        if self.tools._allowed is not None and plan.operator in ("count", "most_frequent"):
            return self._abstain(plan, calls, f"'{plan.operator}' needs every matching event of the KG; "
                                 "this reader sees only the retrieved events")
        if plan.target in ("time", "pair"):
            return (yield from self._pair_steps(plan, calls))
        roles = [plan.known_role] + ([("tail" if plan.known_role == "head" else "head")] if self.retry_inverse else [])
        last_obs = ""
        for attempt, role in enumerate(roles):
            t = None
            if plan.anchor is not None:
                plan.anchor_note = ""
                t, ares = yield from self._anchor_time(calls, plan, role)
                if plan.anchor_note:  # the anchor's direction decides the reading
                    role = "tail" if role == "head" else "head"
                if t is None:
                    within = (" in " + " .. ".join(dict.fromkeys(x.text for x in q.times))
                              if self._scope(plan) is not None else "")
                    last_obs = (ares.observation if not ares.aligned else
                                f"no event of {plan.anchor} {plan.relation!r} {plan.known}{within} to anchor "
                                f"'{q.anchor}' on")
                    continue
            window = self._window_for(plan, t)
            if plan.operator == "select":  # the three TempTool tools, as the agent and the SFT traces use them
                args: dict[str, Any] = {("head" if role == "head" else "tail"): plan.known, "rel": plan.relation,
                                        **window}
                if plan.exclude:
                    args["exclude"] = list(plan.exclude)
                tool = "Get_tail_entity" if role == "head" else "Get_head_entity"
            else:  # counting, most often, yes/no: one aggregate call
                args = {"known": plan.known, "known_role": role, "rel": plan.relation, **window,
                        "by": {"first": "first", "last": "last"}.get(plan.order, "count")}
                if plan.exclude:
                    args["exclude"] = list(plan.exclude)
                tool = "Rank_entities"
            res = yield from self._call(calls, plan, tool, **args)
            if res.error is not None or not res.aligned:
                return self._abstain(plan, calls, res.observation)
            answer_role = "tail" if role == "head" else "head"
            stats = self._entity_stats(res.rows, answer_role, exclude={plan.known, plan.anchor, *plan.exclude})
            answers = self._rank(stats, plan.order)
            tie = self._tie_note(stats, plan.order, answers) if plan.operator not in ("count", "exists") else ""
            top = len(self._tied(stats, plan.order, answers)) if tie else 1
            if not answers and plan.operator in ("count", "exists"):
                doubt = self._relation_doubt(plan, res)
                if doubt:
                    return self._abstain(plan, calls, doubt)
            if plan.operator == "count":
                if q.count_distinct:
                    answers = [str(len(answers))]
                else:
                    n = sum(1 for r in res.rows if r[answer_role] not in {plan.known, *plan.exclude})
                    answers = [str(n)]
            elif plan.operator == "exists":
                if not answers and self.tools._allowed is not None:
                    return self._abstain(plan, calls, "no retrieved event shows it, and the retrieved events "
                                         "cannot show that it never happened")
                answers = ["yes" if answers else "no"]
            if answers:
                note = "reversed direction: answered the inverse reading" if attempt else plan.anchor_note
                note = "; ".join(x for x in (note, tie) if x)
                return ReasonerResult(answers=answers, plan=plan, calls=calls, note=note, reason=note,
                                      evidence=[res.observation], top=top)
            last_obs = (f"no events: {plan.known} ({role}) {res.aligned.get('rel')!r} "
                        f"in ({window['begin_time']}, {window['end_time']}, {window['type']})")
        return self._abstain(plan, calls, last_obs or "no events matched")

    def _pair_steps(self, plan: ToolPlan, calls: list[dict[str, Any]]
                    ) -> Generator[dict[str, Any], ToolResult, ReasonerResult]:
        q = plan.question
        res = yield from self._call(calls, plan, "Get_time", head=plan.known, rel=plan.relation, tail=plan.other)
        if not res.aligned:
            return self._abstain(plan, calls, res.observation)
        note = ""
        if not res.rows and self.retry_inverse:
            res = yield from self._call(calls, plan, "Get_time", head=plan.other, rel=plan.relation, tail=plan.known)
            note = "reversed direction: answered the inverse reading"
        rows = res.rows
        if plan.begin_time != "-inf" or plan.end_time != "inf":
            lo = np.array([parse_time(r["time"].split("/")[0]).lo for r in rows], dtype=np.int64)
            hi = np.array([parse_time(r["time"].split("/")[-1]).hi for r in rows], dtype=np.int64)
            keep: np.ndarray | list[bool] = (
                temporal_mask(lo, hi, plan.begin_time, plan.end_time, plan.type) if rows else [])
            rows = [r for r, k in zip(rows, keep) if k]
        if not rows and plan.operator in ("count", "exists"):
            doubt = self._relation_doubt(plan, res)
            if doubt:
                return self._abstain(plan, calls, doubt)
        if plan.operator == "count":
            return ReasonerResult(answers=[str(len(rows))], plan=plan, calls=calls, note=note, reason=note,
                                  evidence=[res.observation])
        if plan.operator == "exists":
            if not rows and self.tools._allowed is not None:
                return self._abstain(plan, calls, "no retrieved event shows it, and the retrieved events "
                                     "cannot show that it never happened")
            return ReasonerResult(answers=["yes" if rows else "no"], plan=plan, calls=calls, note=note,
                                  reason=note, evidence=[res.observation])
        gran = Granularity.DAY if q.granularity is None else q.granularity
        times = sorted({r["time"].split("/")[0] for r in rows}, key=lambda t: parse_time(t).lo)
        if q.ordinal == "last":
            times = times[::-1]
        answers = []
        for t in times:
            tp = parse_time(t)
            a = minutes_to_iso(tp.lo, min(gran, tp.granularity))
            if a not in answers:
                answers.append(a)
        if not answers:
            return self._abstain(plan, calls, f"no events: {plan.known} {res.aligned.get('rel')!r} {plan.other}"
                                 + (f" in ({plan.begin_time}, {plan.end_time})" if plan.begin_time != "-inf" else ""))
        return ReasonerResult(answers=answers, plan=plan, calls=calls, note=note, reason=note,
                              evidence=[res.observation])

    def _drive(self, gen: Generator[dict[str, Any], ToolResult, ReasonerResult]) -> ReasonerResult:
        try:
            call = next(gen)
            while True:
                call = gen.send(self.tools.call(call["name"], call["arguments"]))
        except StopIteration as stop:
            res = stop.value
            if not res.evidence_ids and res.calls:
                res.evidence_ids = list(dict.fromkeys(int(i) for i in self._last_ids))[:200]
            return res

    def execute(self, plan: ToolPlan) -> ReasonerResult:
        """Run a plan with the tools and rank the answers."""
        return self._drive(self.steps(plan))

    def parse(self, question: str) -> TemporalQuestion:
        """Parse with this KG's time span and the reference date."""
        return parse_question(question, reference=self.reference, span=self.span)

    def _time_problem(self, q: TemporalQuestion) -> str | None:
        """Why the question's times cannot be answered from this graph (``None``: they can)."""
        if q.invalid_times:
            return (f"invalid date(s) in the question: {', '.join(repr(t) for t in q.invalid_times)}; "
                    f"write dates as YYYY, YYYY-MM or YYYY-MM-DD")
        if q.unsupported:
            return "cannot represent: " + "; ".join(q.unsupported)
        if self.span is None:
            return None
        lo, hi = self.span
        span = f"{minutes_to_iso(lo, Granularity.DAY)} .. {minutes_to_iso(hi - 1, Granularity.DAY)}"
        if q.window is not None:
            b, e = parse_time(q.window[0]), parse_time(q.window[1])
            w_lo, w_hi = b.lo, (e.hi if not e.is_inf else hi)
            if w_hi <= lo or w_lo >= hi:
                return (f"the question's time {q.window_text!r} ({q.window[0]} .. {q.window[1]}"
                        + (f", reference date {q.reference}" if q.reference else "")
                        + f") is outside the graph's time span {span}: no records, so the answer is unknown")
            return None
        for t in q.times:
            p = t.point
            # with an anchor ("before X in 2014") the written time is a window, not the order's bound
            kind = "in" if q.anchor is not None else q.constraint
            outside = {"before": p.lo <= lo, "after": p.hi >= hi}.get(kind, p.hi <= lo or p.lo >= hi)
            if outside:
                return (f"the question's time {t.text!r} ({kind}) is outside the graph's time span "
                        f"{span}: no records, so the answer is unknown")
        return None

    def program(self, question: str) -> Generator[dict[str, Any], ToolResult, ReasonerResult]:
        """Parse, check the question's dates, plan, then :meth:`steps` (a generator; see there).

        A question with an invalid date, or a time outside the graph's span, returns
        at once with no answers, ``abstained`` set and the reason in ``reason``
        (``error`` is also set for those two).
        """
        if not isinstance(question, str) or not question.strip():
            raise ConfigError(f"question must be a non-empty string, got {question!r}")
        t0 = time.perf_counter()
        self._last_ids = []
        q = self.parse(question)
        problem = self._time_problem(q)
        if problem is not None:
            res = self._abstain(None, [], problem)
            if q.invalid_times or not q.unsupported:
                res.error = problem
            res.latency_ms = (time.perf_counter() - t0) * 1000
            return res
        plan, why = self.plan_or_reason(q)
        if plan is None:
            return replace(self._abstain(None, [], f"no program: {why}"),
                           latency_ms=(time.perf_counter() - t0) * 1000)
        res = yield from self.steps(plan)
        typed = _TYPED_COUNT.search(q.text) if q.count_distinct else _TYPED.search(q.text)
        if typed and res.answers and q.target != "time" and q.operator != "exists":
            # "which country", "how many countries": the KG's names carry no type, so none is checked
            _add_note(res, f"{'the count includes' if q.count_distinct else 'answers are'} any actor of the KG: "
                           f"it records no entity types, so '{typed.group(1)}' is not checked")
        if plan.rel_note and res.answers:
            _add_note(res, plan.rel_note)
        if q.reference and (res.answers or res.abstained):
            ref = f"relative dates read against {q.reference}" + (
                " (the graph's last date)" if self.reference is None else "")
            _add_note(res, ref)
        res.latency_ms = (time.perf_counter() - t0) * 1000
        return res

    def answer(self, question: str) -> ReasonerResult:
        """Parse, plan, execute; never raises on a question it cannot handle (no answers,
        ``abstained`` true and the reason in ``reason``; ``error`` is set for invalid or
        out-of-range dates)."""
        return self._drive(self.program(question))

    @staticmethod
    def _entity_stats(rows: list[dict[str, str]], answer_role: str,
                      exclude: set[str | None]) -> dict[str, list[int]]:
        """Per answer entity: ``[first minute, last minute, number of events]``."""
        stats: dict[str, list[int]] = {}
        for r in rows:
            name = r[answer_role]
            if name in exclude:
                continue
            lo = parse_time(r["time"].split("/")[0]).lo
            st = stats.setdefault(name, [lo, lo, 0])
            st[0], st[1], st[2] = min(st[0], lo), max(st[1], lo), st[2] + 1
        return stats

    @staticmethod
    def _tie_note(stats: dict[str, list[int]], order: str, answers: list[str]) -> str:
        """Say so when the top answer shares its rank ("first", "last" or "count") with others.

        The ranking then breaks the tie (by the other statistics, then by name); a reader
        who takes only the first answer must know that the data do not single it out.
        """
        tied = TemporalReasoner._tied(stats, order, answers)
        if len(tied) < 2:
            return ""
        col = {"first": 0, "last": 1}.get(order, 2)
        top = stats[answers[0]][col]
        what = (f"{top} event(s) each" if col == 2 else
                f"the {'earliest' if col == 0 else 'latest'} date, {minutes_to_iso(top, Granularity.DAY)}")
        names = ", ".join(tied[:5]) + (f" and {len(tied) - 5} more" if len(tied) > 5 else "")
        return f"{len(tied)} answers tie ({what}): {names}; the data do not single out the top answer"

    @staticmethod
    def _tied(stats: dict[str, list[int]], order: str, answers: list[str]) -> list[str]:
        """The answers that share the top answer's rank (first date, last date or count)."""
        if not answers:
            return []
        col = {"first": 0, "last": 1}.get(order, 2)
        return [a for a in answers if stats[a][col] == stats[answers[0]][col]]

    @staticmethod
    def _rank(stats: dict[str, list[int]], order: str) -> list[str]:
        """Answer entities by first date, last date or count (:meth:`_entity_stats`)."""
        if order == "first":
            return sorted(stats, key=lambda n: (stats[n][0], -stats[n][2], n))
        if order == "last":
            return sorted(stats, key=lambda n: (-stats[n][1], -stats[n][2], n))
        return sorted(stats, key=lambda n: (-stats[n][2], stats[n][0], n))


#: a title or body written right after a name ("the Chinese president", "Iran's foreign minister",
#: "Merkel's government"): the question is about that role, not the name before it
_ROLE_AFTER = re.compile(r"(?:'s)?\s+((?:(?:prime|foreign|defen[cs]e|interior|finance|deputy|vice)\s+)?(?:president|"
                         r"minister|ministry|premier|chancellor|government|king|queen|emperor|leader|spokes(?:man|woman|"
                         r"person)|ambassador|envoy|army|military|navy|police|cabinet|parliament|officials?|"
                         r"authorities))\b(?!'s)", re.I)
#: words a KG body name may add to the role a question writes ("Military Personnel" for "the military")
_GROUP_WORDS = frozenset(normalise_tokens("personnel forces staff members people"))
#: answer types a KG of names cannot check: "which country", "how many countries"
_TYPE_NOUNS = (r"countr(?:y|ies)|nations?|states?|pe(?:rson|ople|rsons)|leaders?|politicians?|governments?|"
               r"organi[sz]ations?|compan(?:y|ies)|cit(?:y|ies)|groups?|men|women|individuals?")
_TYPED = re.compile(rf"\b(?:which|what)\s+(?:other\s+|foreign\s+|\w+\s+)?({_TYPE_NOUNS})\b", re.I)
_TYPED_COUNT = re.compile(rf"\bhow\s+many\s+(?:(?:different|distinct|separate|other|foreign)\s+)?({_TYPE_NOUNS})\b",
                          re.I)
#: "received a visit from", "got threats from", "had a call from": the doer comes after "from"
_CONVERSE = re.compile(r"\b(?:(?:receiv(?:e|es|ed|ing)|got|gotten|gets?|getting|welcom(?:e|es|ed|ing))"
                       r"\s+(?:(?:a|an|the|some|any|several|many|more|repeated|new)\s+)?|"
                       r"(?:ha[ds]|have|having)\s+(?:a|an|the|some|any|several|many|more|repeated|new)\s+)"
                       r"(?P<noun>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2}?)\s+from\b", re.I)
# nouns that name the answer, not the relation ("the name of the first one", "which party")
# head nouns of names that take a place's name for something else: "Paris Club" is a creditors'
# group, not Paris; "Washington Post" a newspaper. Kinds whose short form is the thing itself
# ("Baath" for "Baath Party", "CITIC" for "CITIC Group", "Barclays" for "Barclays Bank") are not
# here. Normalised as the names are.
_KIND_NOUNS = frozenset(w for k in (
    "club post times journal herald tribune gazette daily university college school institute "
    "airport airports airline airlines hospital church cathedral court tribunal stadium").split()
    for w in normalise_tokens(k))


def _other_kind(phrase: str, name: str) -> bool:
    """True when the one-word ``phrase`` is only part of ``name`` and the rest of the name makes it a
    kind of thing of its own ("Paris" in "Paris Club"); bracketed qualifiers do not count."""
    words = normalise_tokens(phrase)
    have = normalise_tokens(re.sub(r"\(.*?\)", " ", name))
    rest = [w for w in have if w not in words]
    return len(words) == 1 and words[0] in have and any(w in _KIND_NOUNS for w in rest)


_ANSWER_NOUNS = {"name", "names", "one", "ones", "party", "parties", "actor", "actors", "entity", "entities",
                 "organisation", "organization", "group", "groups", "someone", "somebody", "anyone", "anybody",
                 "who", "whom", "person", "people", "country", "countries", "not"}
# words that are never (part of) a name in a lower-case question (besides _QWORDS and _SCAFFOLD)
_FUNCTION_WORDS = {"than", "not", "also", "only", "both", "either", "neither", "same", "again", "ago", "still",
                   "then", "later", "earlier", "yesterday", "today", "tomorrow", "week", "weeks", "months",
                   "years", "days", "second", "third", "fourth", "fifth", "next", "previous", "much", "number",
                   "count", "total", "all", "every", "each", "some", "another", "others", "else", "just", "even",
                   "ever", "never", "while", "when", "whom", "whether", "if", "because", "after", "up", "out",
                   "back", "right", "before", "least", "more", "less", "fewer", "most", "often",
                   "frequently", "usually", "once", "twice", "thrice", "their", "them", "they", "his", "her",
                   "its", "he", "she", "we", "our", "us", "my", "your", "these", "those", "such", "did",
                   "happen", "happened", "anything", "something", "nothing", "whatever", "how", "why", "own"}


def _add_note(res: ReasonerResult, note: str) -> None:
    """Append ``note`` to the result's ``reason`` and ``note`` (``note`` starts as the reason)."""
    res.reason = f"{res.reason}; {note}" if res.reason else note
    res.note = res.reason if not res.note else f"{res.note}; {note}"


def _rest_of_name(text: str, ent: tuple[int, int, str], ents: list[tuple[int, int, str]],
                  used: tuple[str | None, ...]) -> bool:
    """``ent`` is the tail of a used entity's name written right after it: a misspelt
    "Nationl Council for Peace and Order of Thailand" links its first words to the council
    and "Thailand" on its own; that "Thailand" is no second name."""
    for _, e, name in ents:
        if name in used and name != ent[2] and ent[2].lower() in name.lower() \
                and re.fullmatch(r"[\s,]*(?:of|in|for)?\s*(?:the\s+)?", text[e: ent[0]], re.I):
            return True
    return False


def _word_in(w: str, words: list[str]) -> bool:
    """``w`` is one of ``words`` (normalised tokens), up to a typo (rapidfuzz ratio >= 85)."""
    from rapidfuzz import fuzz

    return any(w == h or fuzz.ratio(w, h) >= 85 for h in words)


_DEMONYM_ENDS = ("n", "an", "ian", "i", "ese", "ish")


def _demonym(w: str, h: str) -> bool:
    """``w`` is ``h`` or its demonym: "african"/"africa", "iraqi"/"iraq", "chinese"/"china"."""
    return w == h or (w.startswith(h) and w[len(h):] in _DEMONYM_ENDS) or (
        len(h) > 3 and h[-1] in "aey" and w.startswith(h[:-1]) and w[len(h) - 1:] in _DEMONYM_ENDS)


def _same_words(a: list[str], b: list[str], *, typo: bool = False) -> bool:
    """The same words, each up to a demonym ending ("african" for "africa") and, with ``typo``, one
    edit in a word of five letters or more ("surinam" for "suriname"; "australia" is not "austria")."""
    from rapidfuzz.distance import Levenshtein

    return len(a) == len(b) and all(any(_demonym(w, h) or (typo and min(len(w), len(h)) >= 5
                                                             and Levenshtein.distance(w, h) <= 1) for h in b)
                                    for w in a)


_QUALIFIED = re.compile(r"\s*(.*?)\s*\((.+)\)\s*")
_MONTH_WORDS = {"january", "february", "march", "april", "may", "june", "july", "august", "september",
                "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
                "sept", "oct", "nov", "dec", "spring", "summer", "autumn", "fall", "winter"}
_QWORDS = {"who", "whom", "which", "what", "when", "in", "on", "before", "after", "with", "to",
           "could", "can", "did", "was", "the", "at", "during", "from", "by", "how", "is", "are", "has",
           "have", "had", "does", "do", "were", "since", "between", "until", "name", "list", "tell", "give",
           "show", "find", "i", "it", "true", "there", "where", "whose", "and", "or", "of", "a", "an", "any",
           "anyone", "anybody", "someone", "ever", "times", "many", "often", "against", "for", "about",
           "toward", "towards", "into", "over", "under", "within", "among", "through", "via", "like",
           "apart", "other", "except", "besides", "excluding", "prior", "following", "yes", "no"}


def _offset_window(t: int, offset: tuple[int, str, str]) -> tuple[str, str, str]:
    """The window ``offset`` away from minute ``t``: ``(begin, end, type)``."""
    from chronorag.graphs.question import _shift

    n, unit, direction = offset
    within = unit.endswith("-within")
    unit = unit.removesuffix("-within")
    d0 = _dt.date.fromordinal(t // 1440 + 1)
    d1 = _shift(d0, n if direction == "after" else -n, unit)
    g = {"day": Granularity.DAY, "month": Granularity.MONTH, "year": Granularity.YEAR}[unit]
    if within:
        a, b = sorted((d0, d1))
        return a.isoformat(), b.isoformat(), "between"
    iso = minutes_to_iso((d1.toordinal() - 1) * 1440, g)
    return iso, iso, "in/on"
