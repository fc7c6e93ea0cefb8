"""ToPG's Suggestion-Selection steps: Select, Eval, NextQ, Decompose, and the answers.

Each step has an LLM version (JSON through :meth:`ChatLLM.complete_json`) and a
documented no-LLM substitute:

- **Seeding (no LLM)**: Local and Global seed with SuggestNaive plus entity linking:
  graph entities with an upper-case letter whose name occurs verbatim (as words) in the
  question contribute their ``link_per_entity`` (default 5) propositions most similar to
  the question (the LLM's Select would otherwise recognise the question's subjects).
- **Select (no LLM)**: keep the candidates that mention a named entity of the query;
  of candidates suggested by a graph walk, also keep the ``select_keep`` (default 2)
  best-ranked ones (bridge facts are rarely similar to the question); when nothing is
  kept, keep the ``select_keep`` first candidates. An absolute cosine threshold
  (``select_threshold``) is off by default because cosine scales differ between encoders.
- **Eval (no LLM)**: never sufficient, so Local runs ``max_iter`` iterations.
- **NextQ (no LLM)**: one expanded query, the question followed by the named entities
  of the newly selected propositions that the question does not mention.
- **Decompose (no LLM)**: the question itself (no decomposition).
- **Answers (no LLM)**: none; the output is the retrieved context and says so. Global
  mode's partial answers become extractive: each community chunk's propositions closest
  to the question, up to ``partial_words`` (120) words, scored by their best cosine.

A prompt over the model's context window is asked again once with the first facts that
fit (counted as ``topg.context_cut``). When an LLM reply is unusable after one retry, the step records a fallback
(``topg.select``, ``topg.eval``, ``topg.nextq``, ``topg.decompose``, ``topg.partial``,
``topg.answer``) and uses the substitute above.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from chronorag.errors import ConfigError, LLMError
from chronorag.graphs.answer_checks import named_in, offers_choice
from chronorag.graphs.text import no_answer_reply
from chronorag.integrations.llm import ChatLLM, is_context_overflow, record_fallback
from chronorag.workflows.topg import prompts as P
from chronorag.workflows.topg.index import TopgIndex

__all__ = [
    "NO_LLM_NOTE",
    "ToPGSettings",
    "answer_from",
    "decompose",
    "evaluate",
    "global_anchors",
    "global_report",
    "next_questions",
    "passage_ranking",
    "select",
]

NO_LLM_NOTE = ("no-LLM mode: entity-linked seeding, heuristic selection (named entities of the "
               "query and the best walk suggestions), entity query expansion instead of NextQ, "
               "no answer generation")


@dataclass
class ToPGSettings:
    """Parameters of the three modes (paper defaults; see ``graphs.proposition_graph.DEFAULTS``)."""

    k: int = 20
    lam: float = 0.5
    damping: float = 0.85
    tau: float = 0.1
    theta: float = 0.4
    subgraph_size: int = 500
    max_iter: int = 3
    select_threshold: float | None = None
    select_keep: int = 2
    link_per_entity: int = 5
    max_questions: int = 3
    breadth: int = 10
    min_facts: int = 100
    rocchio: tuple[float, float, float] = (1.0, 0.7, 0.15)
    budget: int = 8000
    community_min: int = 10
    community_max: int = 150
    chunk_tokens: int = 2000
    passage_token_limit: int = 500
    report_tokens: int = 8000
    partial_words: int = 120
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ConfigError(f"k must be >= 1, got {self.k}")
        if not 0.0 <= self.lam <= 1.0:
            raise ConfigError(f"lam must be in [0, 1], got {self.lam}")
        if self.max_iter < 0:
            raise ConfigError(f"max_iter must be >= 0, got {self.max_iter}")
        if self.breadth < 1:
            raise ConfigError(f"breadth must be >= 1, got {self.breadth}")

    def walk(self) -> dict[str, Any]:
        """Keyword arguments of the suggestion operators."""
        return {"lam": self.lam, "damping": self.damping, "tau": self.tau, "theta": self.theta,
                "subgraph_size": self.subgraph_size}

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (for run metadata)."""
        return asdict(self)


def _questions_schema(n: int) -> dict[str, Any]:
    """:data:`~chronorag.workflows.topg.prompts.QUESTIONS_SCHEMA` capped at ``n`` items.

    A grammar-constrained server (llama.cpp, vLLM) then stops the list there instead of
    letting a small model write questions until ``max_tokens`` cuts the JSON.
    """
    return {**P.QUESTIONS_SCHEMA, "properties": {"questions": {
        "type": "array", "items": {"type": "string", "maxLength": P.QUESTION_MAX_CHARS}, "maxItems": max(1, n)}}}


def _select_schema(n: int) -> dict[str, Any]:
    """:data:`~chronorag.workflows.topg.prompts.SELECT_SCHEMA` with at most ``n`` numbers.

    One number per candidate fact at most: a constrained server ends the list there
    (SmolLM2 otherwise counted upwards until ``max_tokens`` cut the reply).
    """
    return {**P.SELECT_SCHEMA, "properties": {"keep": {
        "type": "array", "items": {"type": "integer"}, "maxItems": max(1, n)}}}


_PLACEHOLDER = re.compile(r"^\s*(?:<[^<>]*>|\.{3}|…)?\s*$")
#: the ``<...>`` placeholders and reply-format words of ToPG's own prompts (casefolded)
_TEMPLATE_BITS = tuple(sorted(
    set(re.findall(r"<[^<>]{1,60}>", (P.EVAL_USER + P.PARTIAL_USER + P.ANSWER_USER + P.NEXTQ_USER).casefold()))
    | {"<short answer>", "otherwise reply", "reply with {", "reply with a json object"}))


#: the reply fields of ToPG's schemas: an answer that is one of them names the format, not the answer
_FIELD_NAMES = frozenset({"sufficient", "answer", "keep", "questions", "score", "facts", "question"})
#: a question that asks who, what, where, which, when or how (not a yes/no question)
_WH_QUESTION = re.compile(r"^\W*(?:who|whom|whose|what|where|which|when|why|how)\b", re.I)
#: a question that opens with an auxiliary verb asks yes or no ("Are both films ...?", "Did she ...?")
_YES_NO_QUESTION = re.compile(
    r"^\W*(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should|may|might)\b", re.I)
#: a reply that opens with yes or no and then explains ("Yes, both films are American.")
_YES_NO_LEAD = re.compile(r"^\W*(yes|no)\b(?=\s*[,.;:!\u2013\u2014-]|\s*$)", re.I)


#: words that carry no content of their own, for the grounding check of a short answer
_LIGHT = frozenset("the a an of in on at to for and or is was were are be by with from as it its his her "
                   "their this that which who what when where how he she they not no yes".split())
#: longest reply read as a short answer (2Wiki's answers are a few words; the prompts ask for one)
MAX_ANSWER_WORDS = 20


def _grounded(answer: str, facts: Sequence[str]) -> bool:
    """Some content word of ``answer`` occurs in ``facts`` (after SQuAD normalisation)."""
    from chronorag.metrics import normalize_answer

    words = {w for w in normalize_answer(answer).split() if w not in _LIGHT}
    held = set(normalize_answer(" ".join(facts)).split())
    return not words or bool(words & held)


def _usable(answer: str, step: str, *, question: str | None = None, facts: Sequence[str] | None = None) -> str:
    """``answer``, or :class:`LLMError` when it is empty, copies back a placeholder or the
    reply-format wording of the prompt (Gemma 3 270M answered ``<short answer>}; otherwise reply {``),
    carries JSON braces (a short answer holds none, so a brace is the model writing its reply
    format into the answer: SmolLM2 answered ``No, ... The answer is: {``), is a field name of
    the reply ("sufficient"), or says yes or no to a question that asks who, what, where, which,
    when or how (SmolLM2 answered "yes" to "Where was the director of ... born?"), or that offers
    a choice ("no" to "Was Angus Wagner or Juan Carlos Falcón born first?"), or names what a
    wh-question that offers no choice itself names ("Sylvia Burka" to "Where did Sylvia Burka's
    husband die?"; of the 248 such 2Wiki dev questions, no gold answer is named in its question),
    or runs past :data:`MAX_ANSWER_WORDS` words, or, given ``facts``, shares no content word with
    them (Gemma 3 270M answered "enough" to "What is the place of birth of ...?").

    To a yes/no question, a reply that opens with "yes" or "no" and goes on to explain
    ("Yes, both films are American.") is answered by that word alone: the short answer the
    prompt asked for (SQuAD-style scoring would count the sentence as a miss)."""
    low = answer.casefold()
    if not answer.strip():
        raise LLMError(f"{step} reply gave an empty answer")
    if _PLACEHOLDER.match(answer) or any(bit in low for bit in _TEMPLATE_BITS):
        raise LLMError(f"{step} reply copied the prompt's placeholder instead of answering: {answer!r}")
    if "{" in answer or "}" in answer:
        raise LLMError(f"{step} reply wrote JSON braces into the answer: {answer!r}")
    bare = low.strip(" .!\"'")
    if bare in _FIELD_NAMES:
        raise LLMError(f"{step} reply gave a field name of its reply format as the answer: {answer!r}")
    if question is None:
        return answer.strip()
    choice = offers_choice(question)
    if bare in ("yes", "no") and (_WH_QUESTION.match(question) or choice):
        raise LLMError(f"{step} reply said {bare!r} to a question that does not ask yes or no: {answer!r}")
    if not choice and _WH_QUESTION.match(question) and named_in(answer.strip(" ."), question):
        raise LLMError(f"{step} reply answered with what the question itself names: {answer!r}")
    if not choice and _YES_NO_QUESTION.match(question) and (lead := _YES_NO_LEAD.match(answer)):
        return lead.group(1)
    if bare not in ("yes", "no"):
        n = len(answer.split())
        if n > MAX_ANSWER_WORDS:  # Gemma 3 270M: "The film is a horror film. It was shot in ..."
            raise LLMError(f"{step} reply is no short answer ({n} words): {answer[:120]!r}")
        if facts is not None and not no_answer_reply(answer) and not _grounded(answer, facts):  # Gemma: "enough"
            raise LLMError(f"{step} reply names nothing the facts hold: {answer!r}")
    return answer.strip()


def _numbered(lines: Sequence[str]) -> str:
    return "\n".join(f"{i + 1}. {t}" for i, t in enumerate(lines))


def _facts(index: TopgIndex, ids: Sequence[int]) -> str:
    return _numbered([index.graph.propositions[int(p)] for p in ids])


_WINDOW_RE = re.compile(r"maximum context length is (\d+)", re.I)
_REQUEST_RE = re.compile(r"requested (\d+) tokens \((\d+) in the messages, (\d+) in the completion\)", re.I)


def _lines_that_fit(lines: Sequence[str], fixed_chars: int, error: str) -> int:
    """How many of the first ``lines`` to keep so the prompt fits the window the server named.

    From the server's wording (OpenAI, vLLM, llama.cpp: "maximum context length is N tokens
    ... requested M tokens (P in the messages, C in the completion)") the prompt must shrink
    to ``(N - C) / P`` of its size, with a 10% margin, measured in characters; without those
    numbers, half the lines. At least one line is kept.
    """
    w, r = _WINDOW_RE.search(error), _REQUEST_RE.search(error)
    total = fixed_chars + sum(len(t) + 6 for t in lines)
    if w and r and int(r.group(2)) > 0:
        allowed = total * (int(w.group(1)) - int(r.group(3))) / int(r.group(2)) * 0.9
    else:
        allowed = fixed_chars + (total - fixed_chars) / 2
    used, keep = fixed_chars, 0
    for t in lines:
        used += len(t) + 6
        if used > allowed:
            break
        keep += 1
    return max(1, min(keep, len(lines) - 1))


def _ask_with_facts(llm: ChatLLM, system: str, template: str, lines: Sequence[str], *, schema: dict[str, Any],
                    name: str, step: str, **fields: Any) -> Any:
    """``complete_json`` over numbered fact lines. A prompt over the model's context window is
    asked again once with the first facts that fit (:func:`_lines_that_fit`), counted as the
    ``topg.context_cut`` fallback; a second overflow is the caller's counted fallback."""

    def ask(ls: Sequence[str]) -> Any:
        return llm.complete_json([{"role": "system", "content": system},
                                  {"role": "user", "content": template.format(facts=_numbered(ls), **fields)}],
                                 schema=schema, name=name)

    try:
        return ask(lines)
    except LLMError as exc:
        if not is_context_overflow(exc) or len(lines) < 2:
            raise
        fixed = len(system) + len(template.format(facts="", **fields))
        keep = _lines_that_fit(lines, fixed, str(exc))
        record_fallback("topg.context_cut", f"{step}: the prompt exceeded the model's context window; asked "
                        f"again with the first {keep} of {len(lines)} facts ({str(exc)[:200]})")
    return ask(lines[:keep])


def _named(name: str) -> bool:
    return any(ch.isupper() for ch in name)


def _key(text: str) -> str:
    return " ".join(re.findall(r"[0-9a-z\u00c0-\u024f]+", text.casefold()))


_QWORDS = frozenset("what which who whom whose when where why how is are was were did does do the a an of "
                    "in on and or film song album book".split())


def _entity_keys(index: TopgIndex) -> dict[str, int]:
    cache = index.graph._cache
    if "entity_link" not in cache:
        keys: dict[str, int] = {}
        for i, name in enumerate(index.graph.entities):
            if _named(name):
                k = _key(name)
                if len(k) >= 2 and k not in _QWORDS:
                    keys.setdefault(k, i)
        cache["entity_link"] = keys
    return cache["entity_link"]


def link_entities(index: TopgIndex, text: str, *, max_words: int = 10) -> list[int]:
    """Named graph entities mentioned in ``text`` as a capitalised span (longest match first).

    A span counts when its words equal the entity's name (case-insensitive, punctuation
    ignored) and its first word starts with an upper-case letter or a digit in ``text``,
    so the lower-case "director" of a question does not link to an entity "Director".
    """
    keys = _entity_keys(index)
    raw = re.findall(r"[0-9A-Za-z\u00c0-\u024f]+", text)
    words = [w.casefold() for w in raw]
    covered = [False] * len(words)
    found: list[int] = []
    for n in range(min(max_words, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            if any(covered[i:i + n]) or not (raw[i][0].isupper() or raw[i][0].isdigit()):
                continue
            e = keys.get(" ".join(words[i:i + n]))
            if e is not None and e not in found:
                found.append(e)
                covered[i:i + n] = [True] * n
    return found


def linked_propositions(index: TopgIndex, question: str, qvec: np.ndarray, per_entity: int) -> list[int]:
    """The no-LLM seeding extra: each linked entity's ``per_entity`` propositions closest to the question."""
    g = index.graph
    out: list[int] = []
    if per_entity < 1:
        return out
    pe_t = g._cache.get("pe_csc")
    if pe_t is None:
        pe_t = g._cache["pe_csc"] = g.pe.tocsc()
    for e in link_entities(index, question):
        props = pe_t.indices[pe_t.indptr[e]:pe_t.indptr[e + 1]]
        if props.size == 0:
            continue
        cos = g.prop_vectors[props] @ qvec
        for p in props[np.argsort(-cos, kind="stable")[:per_entity]]:
            if int(p) not in out:
                out.append(int(p))
    return out


def query_entities(index: TopgIndex, text: str, ids: Sequence[int] = ()) -> set[int]:
    """Named entities mentioned in ``text`` (see :func:`link_entities`)."""
    return set(link_entities(index, text))


def heuristic_select(index: TopgIndex, query: str, qvec: np.ndarray, cand: Sequence[int], *,
                     threshold: float | None = None, always_keep: int = 0, fallback_keep: int = 2) -> list[int]:
    """The no-LLM Select rule (see the module docstring); keeps the candidates' order.

    ``always_keep``: the first candidates (best suggestions) kept whatever they say;
    ``fallback_keep``: how many first candidates to keep when the rule keeps nothing.
    """
    cand = [int(c) for c in cand]
    if not cand:
        return []
    cos = index.graph.cosine(qvec, np.asarray(cand))
    g = index.graph
    qents = query_entities(index, query, cand)
    keep = []
    for r, (c, s) in enumerate(zip(cand, cos)):
        row = set(g.pe.indices[g.pe.indptr[c]:g.pe.indptr[c + 1]].tolist())
        if r < always_keep or (threshold is not None and s >= threshold) or row & qents:
            keep.append(c)
    if not keep:
        keep = cand[:max(1, fallback_keep)]
    return keep


def select(index: TopgIndex, llm: ChatLLM | None, query: str, qvec: np.ndarray, cand: Sequence[int],
           settings: ToPGSettings, *, walk: bool = False) -> list[int]:
    """Select (Eq. 2): prune candidates with the LLM, or with the heuristic rule.

    ``walk``: the candidates come from a graph walk (ranked by PPR); the no-LLM rule then
    also keeps the first ``settings.select_keep`` of them, since a bridge fact is by
    nature not similar to the question.
    """
    cand = [int(c) for c in cand]
    if not cand:
        return []
    keep_n = settings.select_keep if walk else 0
    if llm is None:
        return heuristic_select(index, query, qvec, cand, threshold=settings.select_threshold,
                                always_keep=keep_n, fallback_keep=settings.select_keep)
    try:
        reply = llm.complete_json([{"role": "system", "content": P.SELECT_SYSTEM},
                                   {"role": "user", "content": P.SELECT_USER.format(
                                       question=query, facts=_facts(index, cand))}],
                                  schema=_select_schema(len(cand)), name="select")
        keep = reply.get("keep") if isinstance(reply, dict) else reply
        if not isinstance(keep, list):
            raise LLMError(f"select reply has no 'keep' list: {str(reply)[:200]}")
        nums = sorted({int(x) for x in keep if isinstance(x, (int, float)) or (isinstance(x, str) and x.isdigit())})
        kept = [cand[n - 1] for n in nums if 1 <= n <= len(cand)]
        if keep and not kept:  # "keep": [0] or [21] for 20 facts: a reply that names none of them
            raise LLMError(f"select reply names no listed fact (1-{len(cand)}): {str(keep)[:200]}")
        return kept
    except (LLMError, ValueError, TypeError) as exc:
        record_fallback("topg.select", str(exc))
        return heuristic_select(index, query, qvec, cand, threshold=settings.select_threshold,
                                always_keep=keep_n, fallback_keep=settings.select_keep)


def seed_candidates(index: TopgIndex, llm: ChatLLM | None, question: str, qvec: np.ndarray,
                    settings: ToPGSettings) -> list[int]:
    """S_0: SuggestNaive, plus (no LLM only) the entity-linked propositions first."""
    ids, _ = index.graph.suggest_naive(qvec, settings.k)
    naive = [int(i) for i in ids]
    if llm is not None:
        return naive
    linked = linked_propositions(index, question, qvec, settings.link_per_entity)
    return linked + [i for i in naive if i not in set(linked)]


def evaluate(index: TopgIndex, llm: ChatLLM | None, question: str, collected: Sequence[int]) -> str | None:
    """Eval: the answer when the collected facts suffice, else ``None`` (always ``None`` without an LLM)."""
    if llm is None or not collected:
        return None
    try:
        reply = _ask_with_facts(llm, P.EVAL_SYSTEM, P.EVAL_USER,
                                [index.graph.propositions[int(p)] for p in collected],
                                schema=P.EVAL_SCHEMA, name="eval", step="eval", question=question)
        if not isinstance(reply, dict):
            raise LLMError(f"eval reply is not an object: {str(reply)[:200]}")
        if reply.get("sufficient") is not True:
            return None
        return _usable(str(reply.get("answer") or ""), "eval", question=question,
                       facts=[index.graph.propositions[int(p)] for p in collected])
    except LLMError as exc:
        record_fallback("topg.eval", str(exc))
        return None


def expand_query(index: TopgIndex, question: str, new_ids: Sequence[int], *, max_entities: int = 8) -> str:
    """The no-LLM NextQ: the question plus the new propositions' named entities it lacks."""
    g = index.graph
    low = question.casefold()
    names: list[str] = []
    for p in new_ids:
        for e in g.pe.indices[g.pe.indptr[int(p)]:g.pe.indptr[int(p) + 1]]:
            n = g.entities[int(e)]
            if _named(n) and n.casefold() not in low and n not in names:
                names.append(n)
    return f"{question} {' '.join(names[:max_entities])}".strip()


def next_questions(index: TopgIndex, llm: ChatLLM | None, question: str, collected: Sequence[int],
                   new_ids: Sequence[int], settings: ToPGSettings) -> list[str]:
    """NextQ: follow-up questions from the LLM, or the entity-expanded question."""
    fallback = [expand_query(index, question, new_ids)]
    if llm is None:
        return fallback
    try:
        reply = _ask_with_facts(llm, P.NEXTQ_SYSTEM, P.NEXTQ_USER,
                                [index.graph.propositions[int(p)] for p in collected],
                                schema=_questions_schema(settings.max_questions), name="next_questions",
                                step="nextq", question=question, max_q=settings.max_questions)
        qs = reply.get("questions") if isinstance(reply, dict) else reply
        qs = [q.strip() for q in qs if isinstance(q, str) and q.strip()] if isinstance(qs, list) else []
        if not qs:
            raise LLMError(f"no follow-up questions in reply: {str(reply)[:200]}")
        return qs[: settings.max_questions]
    except LLMError as exc:
        record_fallback("topg.nextq", str(exc))
        return fallback


def decompose(llm: ChatLLM | None, question: str, m: int) -> list[str]:
    """Decompose (Global seeding): ``m`` sub-questions from the LLM, or the question itself."""
    if llm is None:
        return [question]
    try:
        reply = llm.complete_json([{"role": "system", "content": P.DECOMPOSE_SYSTEM},
                                   {"role": "user", "content": P.DECOMPOSE_USER.format(question=question, m=m)}],
                                  schema=_questions_schema(m), name="decompose")
        qs = reply.get("questions") if isinstance(reply, dict) else reply
        qs = [q.strip() for q in qs if isinstance(q, str) and q.strip()] if isinstance(qs, list) else []
        if not qs:
            raise LLMError(f"no sub-questions in reply: {str(reply)[:200]}")
        return list(dict.fromkeys(qs))[:m]
    except LLMError as exc:
        record_fallback("topg.decompose", str(exc))
        return [question]


def answer_from(llm: ChatLLM | None, question: str, context: Sequence[str]) -> str:
    """Final answer from numbered context lines ("" without an LLM or on an unusable reply)."""
    if llm is None or not context:
        return ""
    try:
        reply = _ask_with_facts(llm, P.ANSWER_SYSTEM, P.ANSWER_USER, list(context),
                                schema=P.ANSWER_SCHEMA, name="answer", step="answer", question=question)
        ans = reply.get("answer") if isinstance(reply, dict) else None
        if not isinstance(ans, str):
            raise LLMError(f"answer reply has no 'answer' string: {str(reply)[:200]}")
        return _usable(ans, "answer", question=question, facts=list(context))
    except LLMError as exc:
        record_fallback("topg.answer", str(exc))
        return ""


def passage_ranking(index: TopgIndex, ranked_props: Sequence[int], tail: Sequence[int] = ()) -> list[int]:
    """Passages in the order their first proposition appears (``ranked_props``, then ``tail``)."""
    seen: dict[int, None] = {}
    for p in [*ranked_props, *tail]:
        seen.setdefault(int(index.graph.prop_passage[int(p)]), None)
    return list(seen)


# ---------------------------------------------------------------------------------------------
# Global mode (Alg. 2 and 3)
# ---------------------------------------------------------------------------------------------

def global_anchors(index: TopgIndex, llm: ChatLLM | None, question: str,
                   settings: ToPGSettings) -> dict[str, Any]:
    """Collect anchor propositions with Rocchio-refined walks (Alg. 2).

    Returns
    -------
    dict
        ``anchors`` (ids in collection order), ``sub_questions``, ``iterations``.
    """
    g = index.graph
    subqs = decompose(llm, question, settings.breadth)
    qvecs = index.embed(subqs)
    qstart = index.embed([question])[0]
    origin: dict[int, np.ndarray] = {}   # q_i^o accumulated per anchor
    negative: dict[int, np.ndarray] = {}
    pool: list[int] = []
    for sq, qv in zip(subqs, qvecs):
        cand = seed_candidates(index, llm, sq, qv, settings)
        kept = select(index, llm, sq, qv, cand, settings)
        pruned = [c for c in cand if c not in set(kept)]
        neg = g.prop_vectors[pruned].mean(axis=0) if pruned else None
        for u in kept:
            if u not in origin:
                pool.append(u)
                origin[u] = qv
                if neg is not None:
                    negative[u] = neg
    anchors = list(pool)
    seen = set(anchors)
    alpha, beta, gamma = settings.rocchio
    it = 0
    while len(anchors) < settings.min_facts and it < settings.max_iter and pool:
        new_pool: list[int] = []
        m = min(settings.breadth, len(pool))
        parts = [pool[i::m] for i in range(m)]
        for part in parts:
            qs = np.stack([rocchio_query(g, u, origin, negative, alpha, beta, gamma) for u in part])
            ids, _, walker = g.suggest_global(qs, part, settings.k, exclude=list(seen), **settings.walk())
            kept = select(index, llm, question, qstart, ids.tolist(), settings, walk=True)
            kept_set = set(kept)
            pruned = [c for c in ids.tolist() if c not in kept_set]
            neg = g.prop_vectors[pruned].mean(axis=0) if pruned else None
            pos = {int(x): j for j, x in enumerate(ids.tolist())}
            for u in kept:
                if u in seen:
                    continue
                seen.add(u)
                new_pool.append(u)
                origin[u] = qs[int(walker[pos[u]])]
                if neg is not None:
                    negative[u] = neg
        anchors.extend(new_pool)
        pool = new_pool
        it += 1
    return {"anchors": anchors, "sub_questions": subqs, "iterations": it}


def rocchio_query(g: Any, u: int, origin: dict[int, np.ndarray], negative: dict[int, np.ndarray],
                  alpha: float, beta: float, gamma: float) -> np.ndarray:
    """Eq. 11 for anchor ``u``: its walker's query, its own vector, minus pruned candidates."""
    from chronorag.workflows.topg.proposition_graph import rocchio

    return rocchio(origin[u], g.prop_vectors[u], negative.get(u), alpha=alpha, beta=beta, gamma=gamma)


def _words(text: str) -> int:
    """Whitespace words: ToPG's budgets (chunk_tokens, partial_words) are counted in words."""
    return len(text.split())


def _trim(text: str, limit: int) -> str:
    w = text.split()
    return text if len(w) <= limit else " ".join(w[:limit]) + " ..."


def global_report(index: TopgIndex, llm: ChatLLM | None, question: str, anchors: Sequence[int],
                  settings: ToPGSettings) -> dict[str, Any]:
    """Communities around the anchors (Alg. 3), partial answers, lost-in-the-middle ordering, answer."""
    from chronorag.workflows.topg.communities import select_communities

    g = index.graph
    if g.communities is None:
        from chronorag.workflows.topg.communities import hierarchical_leiden

        g.communities = hierarchical_leiden(g)
    chosen = select_communities(anchors, g.communities, budget=settings.budget,
                                min_size=settings.community_min, max_size=settings.community_max)
    qv = index.embed([question])[0]
    partials: list[dict[str, Any]] = []
    for ci in chosen:
        nodes = g.communities[ci]
        props = [int(n) for n in nodes if n < g.n_props]
        props.sort(key=lambda p: -float(g.prop_vectors[p] @ qv))
        ents = [g.node_label(int(n))[1] for n in nodes if g.n_props <= n < g.n_props + len(g.entities)]
        pas = [_trim(g.node_label(int(n))[1], settings.passage_token_limit)
               for n in nodes if n >= g.n_props + len(g.entities)]
        lines = ([f"Topics: {', '.join(ents[:30])}"] if ents else []) + \
            [g.propositions[p] for p in props] + pas
        chunks: list[list[str]] = []
        cur: list[str] = []
        for line in lines:
            if cur and _words("\n".join(cur)) + _words(line) > settings.chunk_tokens:
                chunks.append(cur)
                cur = []
            cur.append(line)
        if cur:
            chunks.append(cur)
        for chunk in chunks:
            partials.append(_partial(llm, question, qv, index, chunk, props, ci, settings.partial_words))
    partials.sort(key=lambda x: -x["score"])
    kept: list[dict[str, Any]] = []
    used = 0
    for p in partials:  # the best partial answers that fit the report budget
        t = _words(p["answer"])
        if kept and used + t > settings.report_tokens:
            continue
        kept.append(p)
        used += t
    # best first and best last: ranks 1, 3, 5, ... from the front, 2, 4, ... from the back
    ordered = kept[0::2] + kept[1::2][::-1]
    context = [p["answer"] for p in ordered]
    return {"communities": [int(c) for c in chosen], "partials": ordered, "context": context,
            "answer": answer_from(llm, question, context)}


def _partial(llm: ChatLLM | None, question: str, qv: np.ndarray, index: TopgIndex, chunk: list[str],
             props: list[int], community: int, partial_words: int = 120) -> dict[str, Any]:
    g = index.graph
    if llm is not None:
        try:
            reply = llm.complete_json([{"role": "system", "content": P.PARTIAL_SYSTEM},
                                       {"role": "user", "content": P.PARTIAL_USER.format(
                                           question=question, notes="\n".join(chunk))}],
                                      schema=P.PARTIAL_SCHEMA, name="partial_answer")
            if not isinstance(reply, dict) or not isinstance(reply.get("answer"), str):
                raise LLMError(f"partial answer reply malformed: {str(reply)[:200]}")
            score = float(reply.get("score", 0) or 0)
            return {"community": community, "answer": reply["answer"].strip(), "score": score}
        except (LLMError, ValueError, TypeError) as exc:
            record_fallback("topg.partial", str(exc))
    # extractive substitute: the chunk's propositions closest to the question, up to partial_words
    in_chunk = set(chunk)
    ranked = [p for p in props if g.propositions[p] in in_chunk] or props
    words = 0
    take: list[int] = []
    for p in ranked:
        if take and words + _words(g.propositions[p]) > partial_words:
            break
        take.append(p)
        words += _words(g.propositions[p])
    score = float(max((g.prop_vectors[p] @ qv for p in take[:3]), default=0.0)) * 100
    return {"community": community, "answer": " ".join(g.propositions[p] for p in take) or chunk[0],
            "score": score}
