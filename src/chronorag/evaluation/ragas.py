"""RAGAS on chronorag predictions (extra ``eval``).

- :func:`load_predictions` reads the run file ``chronorag eval`` writes and validates
  every record's field types (a string where a list belongs, a null answer or null
  evidence is an error naming ``file:line`` and the field, never a silent score).
- :func:`to_ragas_dataset` and :func:`nodes_to_ragas_dataset` build a RAGAS
  ``EvaluationDataset`` from prediction records, or from any LlamaIndex retriever's
  output (lists of ``NodeWithScore``).
- :class:`TemporalContextRecall` and :class:`TemporalContextPrecision` are RAGAS
  single-turn metrics that do not credit a context with the wrong date or entity (see
  below); :func:`ragas_scores` runs them with RAGAS's LLM-free string metrics by
  default, and with ``llm=`` RAGAS's LLM metrics (faithfulness, answer correctness,
  context precision) through any OpenAI-compatible endpoint and its embeddings.
- :func:`tool_call_scores` scores TempTool traces with RAGAS's ``ToolCallAccuracy`` in
  strict order.

Which context metric to use
---------------------------
RAGAS's ``NonLLMContextRecall`` counts a gold passage as retrieved when some retrieved
text is *similar as a string* (normalised Levenshtein > 0.5). For temporal facts this
is wrong: ``"On 2014-06-05, Barack Obama criticized or denounced France."`` is 90%
similar to the gold ``"On 2014-07-09, Barack Obama criticized or denounced China."``.
The temporal metrics count a gold passage as retrieved only when one retrieved text
carries **every date** of the passage (at the passage's granularity: a gold ``2019``
accepts ``2019-03-01``), **every number**, **every named entity** (capitalised names),
**every relation between two names, in the same direction** (``"Obama praised China"``
and ``"China criticized Obama"`` do not support ``"Obama criticized China"``), and at
least ``min_overlap`` of its words. Use them whenever answers hinge on dates or
names (temporal KGQA, yearly reports); keep the string metrics for free-text
passages without such anchors, or for comparing with published RAGAS numbers.
"""

from __future__ import annotations

import asyncio
import os
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from chronorag.errors import (
    ArgumentTypeError,
    ConfigError,
    DataFormatError,
    MissingFileError,
    missing_extra,
)
from chronorag.graphs.persist import iter_jsonl
from chronorag.metrics import normalize_answer, token_overlap

__all__ = [
    "TemporalContextPrecision",
    "TemporalContextRecall",
    "context_supports",
    "load_predictions",
    "load_reference_tool_calls",
    "nodes_to_ragas_dataset",
    "ragas_llm_and_embeddings",
    "relation_clauses",
    "run_sync",
    "skipped_metrics",
    "ragas_scores",
    "temporal_anchors",
    "temporal_collection_metrics",
    "temporal_context_scores",
    "to_ragas_dataset",
    "tool_call_scores",
    "validate_record",
]

try:  # the metric classes subclass RAGAS's; without the extra they are not defined
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from ragas.dataset_schema import SingleTurnSample
        from ragas.metrics.base import MetricOutputType, MetricType, SingleTurnMetric
    _RAGAS = True
except ImportError:  # pragma: no cover - exercised only without the eval extra
    _RAGAS = False
    SingleTurnMetric = object  # type: ignore[assignment,misc]


# ---------------------------------------------------------------------------
# Reading and validating prediction records
# ---------------------------------------------------------------------------

def _str_list(r: dict[str, Any], key: str, where: str, *, required: bool, nonempty: bool = False) -> None:
    if key not in r:
        if required:
            raise DataFormatError(f"{where}: missing field {key!r} (a list of strings)")
        return
    v = r[key]
    if v is None:
        hint = " (use [] when nothing was retrieved)" if key == "evidence" else ""
        raise DataFormatError(f"{where}: field {key!r} is null; it must be a list of strings{hint}")
    if isinstance(v, str):
        raise DataFormatError(f"{where}: field {key!r} must be a list of strings, got the string {v[:80]!r} "
                              f"(wrap it: [{v[:40]!r}])")
    if not isinstance(v, list):
        raise DataFormatError(f"{where}: field {key!r} must be a list of strings, got {type(v).__name__}")
    bad = [x for x in v if not isinstance(x, str)]
    if bad:
        raise DataFormatError(f"{where}: field {key!r} must hold only strings, found {bad[0]!r}")
    if nonempty and not v:
        raise DataFormatError(f"{where}: field {key!r} is empty; a question needs at least one gold answer")


def validate_record(r: Any, where: str = "record") -> dict[str, Any]:
    """Check one prediction record's field types; return it.

    Required: ``question`` (non-empty string), ``answers`` (non-empty list of strings),
    ``predicted`` and ``evidence`` (lists of strings, possibly empty). Optional:
    ``gold_evidence`` (list of strings), ``tool_calls`` / ``reference_tool_calls`` (lists).

    Raises
    ------
    DataFormatError
        Naming ``where`` (``file:line``), the field and what is wrong with it.
    """
    if not isinstance(r, dict):
        raise DataFormatError(f"{where}: expected a JSON object, got {type(r).__name__}")
    q = r.get("question")
    if not isinstance(q, str) or not q.strip():
        raise DataFormatError(f"{where}: field 'question' must be a non-empty string, got {q!r:.80}")
    _str_list(r, "answers", where, required=True, nonempty=True)
    _str_list(r, "predicted", where, required=True)
    _str_list(r, "evidence", where, required=True)
    _str_list(r, "gold_evidence", where, required=False)
    for key in ("tool_calls", "reference_tool_calls"):
        if key in r and not isinstance(r[key], list):
            raise DataFormatError(f"{where}: field {key!r} must be a list of tool calls, got {type(r[key]).__name__}")
    return r


def load_predictions(path: str | os.PathLike[str], *, include_errors: bool = False) -> list[dict[str, Any]]:
    """Read and validate a run file (predictions JSONL) written by ``chronorag eval``.

    The run's summary line is skipped; so are error rows (questions whose method
    raised) unless ``include_errors``.

    Raises
    ------
    FileNotFoundError
        No such file.
    DataFormatError
        A bad line: ``file:line``, the field and the problem.
    """
    p = Path(path)
    if not p.is_file():
        raise MissingFileError(f"no such predictions file: {p}")
    rows = []
    for lineno, r in iter_jsonl(p):
        if isinstance(r, dict) and r.get("record") == "run":
            continue
        validate_record(r, f"{p}:{lineno}")
        if r.get("error") and not include_errors:
            continue
        rows.append({**r, "_line": lineno, "_where": f"{p}:{lineno}"})
    if not rows:
        raise DataFormatError(f"{p} holds no scorable predictions (every line is a summary or an error row)")
    return rows


def _sample(r: dict[str, Any]) -> dict[str, Any]:
    pred, gold = r["predicted"], r["answers"]
    s = {"user_input": r["question"], "retrieved_contexts": list(r["evidence"]),
         "response": pred[0] if pred else "", "reference": " | ".join(gold)}
    if r.get("gold_evidence"):
        s["reference_contexts"] = list(r["gold_evidence"])
    return s


def to_ragas_dataset(records: Iterable[dict[str, Any]]) -> Any:
    """A RAGAS ``EvaluationDataset`` from (validated) prediction records."""
    try:
        from ragas import EvaluationDataset
    except ImportError as exc:
        raise missing_extra("ragas", "eval") from exc
    samples = [_sample(validate_record(r, f"record #{i}")) for i, r in enumerate(records)]
    return EvaluationDataset.from_list(samples)


def nodes_to_ragas_dataset(
    questions: Sequence[str],
    retrieved: Sequence[Sequence[Any]],
    *,
    responses: Sequence[str] | None = None,
    references: Sequence[str] | None = None,
    reference_contexts: Sequence[Sequence[str]] | None = None,
) -> Any:
    """A RAGAS ``EvaluationDataset`` from LlamaIndex retriever output.

    Parameters
    ----------
    questions : sequence of str
        One question per sample.
    retrieved : sequence of lists of NodeWithScore
        What a retriever returned for each question (``retriever.retrieve(q)``), best first;
        each node's ``get_content()`` becomes a retrieved context.
    responses, references : sequence of str, optional
        The generated answer and the gold answer per question.
    reference_contexts : sequence of lists of str, optional
        The gold evidence passages per question (for the context metrics).

    Examples
    --------
    >>> ds = nodes_to_ragas_dataset([q], [retriever.retrieve(q)], reference_contexts=[[gold]])  # doctest: +SKIP
    """
    try:
        from ragas import EvaluationDataset
    except ImportError as exc:
        raise missing_extra("ragas", "eval") from exc
    if isinstance(questions, str):
        raise ArgumentTypeError("questions must be a sequence of strings, not one string")
    n = len(questions)
    for name, seq in (("retrieved", retrieved), ("responses", responses), ("references", references),
                      ("reference_contexts", reference_contexts)):
        if seq is not None and len(seq) != n:
            raise ConfigError(f"{name} has {len(seq)} items for {n} questions")
    samples = []
    for i, q in enumerate(questions):
        contexts = []
        for node in retrieved[i]:
            inner = getattr(node, "node", node)
            if not hasattr(inner, "get_content"):
                raise ArgumentTypeError(f"retrieved[{i}] holds a {type(node).__name__}, not a NodeWithScore")
            contexts.append(inner.get_content())
        s: dict[str, Any] = {"user_input": q, "retrieved_contexts": contexts}
        if responses is not None:
            s["response"] = responses[i]
        if references is not None:
            s["reference"] = references[i]
        if reference_contexts is not None:
            if isinstance(reference_contexts[i], str):
                raise ArgumentTypeError(f"reference_contexts[{i}] must be a list of strings, not a string")
            s["reference_contexts"] = list(reference_contexts[i])
        samples.append(s)
    return EvaluationDataset.from_list(samples)


# ---------------------------------------------------------------------------
# Temporal context metrics
# ---------------------------------------------------------------------------

_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], 1)}
_MON = r"(January|February|March|April|May|June|July|August|September|October|November|December)"
_ISO = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")
_DMY = re.compile(rf"\b(\d{{1,2}})\s+{_MON}\s+(\d{{4}})\b", re.I)
_MDY = re.compile(rf"\b{_MON}\s+(\d{{1,2}}),?\s+(\d{{4}})\b", re.I)
_MY = re.compile(rf"\b{_MON}\s+(\d{{4}})\b", re.I)
_YEAR = re.compile(r"(?<![\d,.])(1[89]\d{2}|20\d{2})(?![\d,.]\d)")
_NUM = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")
_NAME = re.compile(r"[A-Z][\w'&.-]*(?:\s+(?:\((?:[A-Z][\w'&.-]*\s*)+\)|(?:of|de|von|and|the)\s+[A-Z][\w'&.-]*|[A-Z][\w'&.-]*))*")
_FUNCTION_WORDS = {"on", "in", "at", "by", "the", "a", "an", "after", "before", "during", "from", "to",
                   "since", "until", "for", "of", "and", "or", "it", "its", "this", "that", "these", "those",
                   "he", "she", "they", "we", "i", "when", "who", "what", "which", "where", "how", "as", "with"}


@dataclass(frozen=True)
class _Anchors:
    dates: tuple[tuple[int, ...], ...]
    numbers: frozenset[str]
    names: frozenset[str]


def temporal_anchors(text: str) -> _Anchors:
    """The dates (as ``(y,)``, ``(y, m)`` or ``(y, m, d)``), numbers and names in ``text``."""
    if not isinstance(text, str):
        raise ArgumentTypeError(f"text must be a string, got {type(text).__name__}")
    dates: list[tuple[int, ...]] = []
    rest = text
    for rx, conv in (
        (_ISO, lambda m: (int(m[1]), int(m[2])) + ((int(m[3]),) if m[3] else ())),
        (_DMY, lambda m: (int(m[3]), _MONTHS[m[2].lower()], int(m[1]))),
        (_MDY, lambda m: (int(m[3]), _MONTHS[m[1].lower()], int(m[2]))),
        (_MY, lambda m: (int(m[2]), _MONTHS[m[1].lower()])),
        (_YEAR, lambda m: (int(m[1]),)),
    ):
        for m in rx.finditer(rest):
            dates.append(conv(m))
        rest = rx.sub(" ", rest)
    numbers = frozenset(n.replace(",", "") for n in _NUM.findall(rest) if len(n.replace(",", "")) > 1)
    names = set()
    for m in _NAME.finditer(rest):
        words = m.group(0).split()
        while words and words[0].lower() in _FUNCTION_WORDS:
            words = words[1:]
        name = normalize_answer(" ".join(words))
        if name and name not in _FUNCTION_WORDS:
            names.add(name)
    return _Anchors(tuple(dates), numbers, frozenset(names))


def _date_found(d: tuple[int, ...], candidates: Sequence[tuple[int, ...]]) -> bool:
    return any(len(c) >= len(d) and c[: len(d)] == d for c in candidates)


_NEGATIONS = {"not", "no", "never", "nor", "neither", "without"}
_MAX_RELATION_WORDS = 6
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")


def _stem(word: str) -> str:
    """A crude English stem, enough to match "criticized"/"criticize"/"criticizes"."""
    for suf in ("ing", "ed", "es", "e", "s", "d"):
        if len(word) > len(suf) + 3 and word.endswith(suf):
            return word[: -len(suf)]
    return word


def _find(tokens: list[str], name: list[str]) -> list[tuple[int, int]]:
    n = len(name)
    return [(i, i + n) for i in range(len(tokens) - n + 1) if tokens[i:i + n] == name]


def relation_clauses(reference: str, names: Iterable[str] | None = None
                     ) -> list[tuple[str, frozenset[str], str]]:
    """The ``(first name, relation stems, second name)`` clauses of a reference passage.

    Within each sentence, for every two consecutive names, the content words between them
    (at most 6; no function words, dates or numbers) are the relation that links them, in
    that direction: ``"Barack Obama criticized or denounced China"`` gives
    ``("barack obama", {"criticiz", "denounc"}, "china")``.
    """
    names = list(temporal_anchors(reference).names if names is None else names)
    out = []
    for sent in _SENTENCE.split(reference):
        toks = normalize_answer(sent).split()
        spans = sorted((sp, n) for n in names for sp in _find(toks, n.split())[:1])
        for (a_sp, a), (b_sp, b) in zip(spans, spans[1:]):
            between = [w for w in toks[a_sp[1]:b_sp[0]]
                       if w not in _FUNCTION_WORDS and not any(ch.isdigit() for ch in w)]
            if 1 <= len(between) <= _MAX_RELATION_WORDS and a != b:
                out.append((a, frozenset(_stem(w) for w in between), b))
    return out


def _clause_found(tokens: list[str], a: str, rel: frozenset[str], b: str, ref_negated: bool) -> bool:
    """``a ... rel ... b`` in ``tokens``: ``a`` before ``b``, at least half of the relation's
    stems between them, and no negation the reference lacks."""
    need = (len(rel) + 1) // 2
    for _, a_end in _find(tokens, a.split()):
        for b_start, _ in _find(tokens, b.split()):
            if b_start < a_end:
                continue
            between = tokens[a_end:b_start]
            if not ref_negated and _NEGATIONS & set(between):
                continue
            if len(rel & {_stem(w) for w in between}) >= need:
                return True
    return False


def context_supports(retrieved: str, reference: str, *, min_overlap: float = 0.5) -> bool:
    """Does one retrieved text carry the reference passage's dates, numbers, names and relations?

    True when every date of ``reference`` occurs in ``retrieved`` at least as finely
    (a year is met by a day in that year), every number and every capitalised name occurs,
    every **relation clause** of the reference holds in the same **direction** (see
    :func:`relation_clauses`: the first name comes before the second in ``retrieved``, at
    least half of the relation's words, by stem, lie between them, and no negation the
    reference lacks), and at least ``min_overlap`` of the reference's words occur. A
    reference with no dates, numbers or names needs 0.8 of its words.

    Against ``"Obama criticized China"``, ``"Obama praised China"`` (another relation) and
    ``"China criticized Obama"`` (the other direction) are not support. The direction is
    read from word order, as chronorag's event sentences write it (subject, relation,
    object); a passive paraphrase ("China was criticized by Obama") is not credited.
    """
    ref = temporal_anchors(reference)
    if not (ref.dates or ref.numbers or ref.names):
        return token_overlap(reference, retrieved) >= 0.8
    got = temporal_anchors(retrieved)
    if not all(_date_found(d, got.dates) for d in ref.dates):
        return False
    if not ref.numbers <= got.numbers:
        return False
    text = f" {normalize_answer(retrieved)} "
    if not all(f" {n} " in text for n in ref.names):
        return False
    tokens = text.split()
    ref_negated = bool(_NEGATIONS & set(normalize_answer(reference).split()))
    if not all(_clause_found(tokens, a, rel, b, ref_negated) for a, rel, b in relation_clauses(reference, ref.names)):
        return False
    return token_overlap(reference, retrieved) >= min_overlap


def temporal_context_scores(retrieved: Sequence[str], reference: Sequence[str], *,
                            min_overlap: float = 0.5) -> tuple[float, float]:
    """``(recall, precision)`` of retrieved contexts against gold passages.

    Recall: share of gold passages supported by some retrieved text. Precision: RAGAS's
    rank-aware average precision, a retrieved text being relevant when it supports some
    gold passage (0.0 when none is).
    """
    for name, v in (("retrieved", retrieved), ("reference", reference)):
        if v is None or isinstance(v, str) or not all(isinstance(x, str) for x in v):
            raise ArgumentTypeError(f"{name} must be a list of strings, got {v!r:.80}")
    if not reference:
        raise ConfigError("reference is empty: temporal context metrics need gold passages")
    rel = [any(context_supports(r, g, min_overlap=min_overlap) for g in reference) for r in retrieved]
    recall = sum(any(context_supports(r, g, min_overlap=min_overlap) for r in retrieved)
                 for g in reference) / len(reference)
    hits, ap = 0, 0.0
    for k, is_rel in enumerate(rel, 1):
        if is_rel:
            hits += 1
            ap += hits / k
    return recall, (ap / hits if hits else 0.0)


if _RAGAS:
    @dataclass
    class _TemporalContextMetric(SingleTurnMetric):
        """Shared body of the two temporal metrics; ``_score_index`` picks recall (0) or precision (1)."""

        _score_index: ClassVar[int] = 0
        _required_columns: dict[MetricType, set[str]] = field(default_factory=lambda: {
            MetricType.SINGLE_TURN: {"retrieved_contexts", "reference_contexts"}})
        output_type: MetricOutputType = MetricOutputType.CONTINUOUS
        min_overlap: float = 0.5

        def init(self, run_config: Any) -> None:
            return None

        async def _single_turn_ascore(self, sample: Any, callbacks: Any) -> float:
            return temporal_context_scores(sample.retrieved_contexts or [], sample.reference_contexts or [],
                                           min_overlap=self.min_overlap)[self._score_index]

        async def _ascore(self, row: dict[str, Any], callbacks: Any) -> float:
            return await self._single_turn_ascore(SingleTurnSample(**row), callbacks)

    @dataclass
    class TemporalContextRecall(_TemporalContextMetric):
        """RAGAS metric: share of gold passages whose dates, numbers and names were retrieved.

        Columns: ``retrieved_contexts`` and ``reference_contexts``. See
        :func:`context_supports` for the match rule.
        """

        name: str = "temporal_context_recall"
        _score_index: ClassVar[int] = 0

    @dataclass
    class TemporalContextPrecision(_TemporalContextMetric):
        """RAGAS metric: rank-aware precision of retrieved contexts that carry a gold passage's
        dates, numbers and names (columns ``retrieved_contexts``, ``reference_contexts``)."""

        name: str = "temporal_context_precision"
        _score_index: ClassVar[int] = 1
    def temporal_collection_metrics(*, min_overlap: float = 0.5) -> tuple[Any, Any]:
        """The temporal recall and precision in RAGAS's newer collections API.

        ``ragas.metrics.collections.BaseMetric`` subclasses (``metric.score(retrieved_contexts=...,
        reference_contexts=...)``, ``await metric.ascore(...)``, ``abatch_score``) for code
        that has moved off the deprecated ``evaluate()``.
        """
        from ragas.metrics.collections.base import BaseMetric
        from ragas.metrics.result import MetricResult

        class _Temporal(BaseMetric):
            def __init__(self, name: str, which: int) -> None:
                self.which = which
                super().__init__(name=name)

            async def ascore(self, retrieved_contexts: list[str],  # type: ignore[override]
                             reference_contexts: list[str]) -> Any:
                value = temporal_context_scores(retrieved_contexts, reference_contexts,
                                                min_overlap=min_overlap)[self.which]
                return MetricResult(value=float(value))

        return _Temporal("temporal_context_recall", 0), _Temporal("temporal_context_precision", 1)
else:  # pragma: no cover
    def TemporalContextRecall(*a: Any, **k: Any) -> Any:  # type: ignore[no-redef]  # noqa: N802
        raise missing_extra("ragas", "eval")

    TemporalContextPrecision = TemporalContextRecall  # type: ignore[misc,assignment]


# ---------------------------------------------------------------------------
# LLM metrics through an OpenAI-compatible endpoint
# ---------------------------------------------------------------------------

def _stripping_chat_model(chat: Any) -> Any:
    """A LangChain chat model that sends through chronorag's ChatLLM (reasoning stripped)."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    roles = {"human": "user", "ai": "assistant", "system": "system"}

    class ChronoRAGChat(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "chronorag-chatllm"

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            msgs = [{"role": roles.get(getattr(m, "type", "human"), "user"), "content": str(m.content)}
                    for m in messages]
            text = chat.complete(msgs, stop=stop)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    return ChronoRAGChat()


def ragas_llm_and_embeddings(llm: Any, *, embedding_url: str | None = None,
                             embedding_model: str | None = None) -> tuple[Any, Any]:
    """RAGAS LLM and embeddings wrappers for an LLM chronorag accepts.

    Parameters
    ----------
    llm : LLM object or URL
        Anything :func:`~chronorag.integrations.llm.resolve_llm` accepts, or an endpoint
        URL (wrapped as ``LLMConfig(base_url=...)``). Replies pass through chronorag's
        adapter, so reasoning blocks are stripped before RAGAS parses them.
    embedding_url, embedding_model : str, optional
        The OpenAI-compatible ``/v1/embeddings`` endpoint and model (default: the LLM's
        endpoint and model name).
    """
    from chronorag.integrations.llm import LLMConfig, resolve_llm

    if isinstance(llm, str):
        llm = LLMConfig(base_url=llm)
    chat = resolve_llm(llm, required=True, use_env=False)
    backend = chat.backend
    url = embedding_url or getattr(backend, "base_url", None)
    if url is None:
        raise ConfigError("the embeddings endpoint is unknown for this LLM object; pass embedding_url=")
    try:
        from langchain_openai import OpenAIEmbeddings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from ragas.embeddings import LangchainEmbeddingsWrapper
            from ragas.llms import LangchainLLMWrapper

            emb = OpenAIEmbeddings(  # type: ignore[call-arg]
                base_url=url, api_key=getattr(backend, "api_key", "EMPTY") or "EMPTY",
                model=embedding_model or getattr(backend, "model", "chronorag"),
                check_embedding_ctx_length=False)
            return LangchainLLMWrapper(_stripping_chat_model(chat)), LangchainEmbeddingsWrapper(emb)
    except ImportError as exc:
        raise missing_extra("ragas", "eval") from exc


def _default_metrics(*, with_evidence: bool, with_llm: bool) -> tuple[list[Any], list[Any]]:
    """``(metrics for every row, metrics for rows with gold evidence)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from ragas.metrics import (
            NonLLMContextPrecisionWithReference,
            NonLLMContextRecall,
            NonLLMStringSimilarity,
        )
    try:
        every: list[Any] = [NonLLMStringSimilarity()]
    except ImportError as exc:  # rapidfuzz backs the string metrics
        raise missing_extra("rapidfuzz", "eval") from exc
    ctx: list[Any] = []
    if with_evidence:
        ctx = [NonLLMContextRecall(), NonLLMContextPrecisionWithReference(),
               TemporalContextRecall(), TemporalContextPrecision()]
    if with_llm:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from ragas.metrics import (
                AnswerCorrectness,
                Faithfulness,
                LLMContextPrecisionWithReference,
            )
        every += [Faithfulness(), AnswerCorrectness()]
        if with_evidence:
            ctx.append(LLMContextPrecisionWithReference())
    return every, ctx


_CONTEXT_METRICS = ("non_llm_context_recall", "non_llm_context_precision_with_reference",
                    "temporal_context_recall", "temporal_context_precision")
_LLM_METRICS = ("faithfulness", "answer_correctness")
_LLM_CONTEXT_METRICS = ("llm_context_precision_with_reference",)


def skipped_metrics(*, with_evidence: bool, with_llm: bool) -> dict[str, str]:
    """The default metrics :func:`ragas_scores` does not run, each with the reason why."""
    out: dict[str, str] = {}
    no_ev = ("no record has 'gold_evidence' (the gold passages the context metrics compare the "
             "retrieved evidence with); add it to the question file")
    no_llm = "no LLM given; pass --llm-url (ragas_scores(llm=...)) for RAGAS's LLM-judged metrics"
    if not with_evidence:
        out.update(dict.fromkeys(_CONTEXT_METRICS, no_ev))
    if not with_llm:
        out.update(dict.fromkeys(_LLM_METRICS, no_llm))
        out.update(dict.fromkeys(_LLM_CONTEXT_METRICS, no_llm if with_evidence else f"{no_llm}; and {no_ev}"))
    elif not with_evidence:
        out.update(dict.fromkeys(_LLM_CONTEXT_METRICS, no_ev))
    return out


def ragas_scores(records: Sequence[dict[str, Any]] | str | os.PathLike[str], *,
                 metrics: Sequence[Any] | None = None, llm: Any = None, embedding_url: str | None = None,
                 embedding_model: str | None = None, progress: bool = False) -> dict[str, Any]:
    """Mean RAGAS scores over the predictions.

    Parameters
    ----------
    records : sequence of dict or path
        Prediction records, or the run file ``chronorag eval`` wrote (validated; error
        rows skipped).
    metrics : sequence of RAGAS metrics, optional
        Default: ``NonLLMStringSimilarity`` (and with ``llm`` ``Faithfulness`` and
        ``AnswerCorrectness``) over every record; over the records that have gold evidence
        (``n_with_gold_evidence`` of them) ``NonLLMContextRecall``,
        ``NonLLMContextPrecisionWithReference``, the temporal context recall/precision and,
        with ``llm``, ``LLMContextPrecisionWithReference``. Given metrics run over every record.
    llm : LLM object or URL, optional
        For the LLM metrics (see :func:`ragas_llm_and_embeddings`).
    progress : bool
        Show RAGAS's progress bar.

    Returns
    -------
    dict
        ``{metric name: mean}`` plus ``n``; a metric RAGAS could not compute for some rows
        (LLM failures) is averaged over the rest and ``"<name>_failed"`` counts them. With
        the default metrics, ``"skipped"`` maps each default metric that did not run to the
        reason (no gold evidence, no LLM; see :func:`skipped_metrics`).
    """
    if isinstance(records, (str, os.PathLike)):
        rows = load_predictions(records)
    else:
        rows = [validate_record(r, f"record #{i}") for i, r in enumerate(records)]
        rows = [r for r in rows if not r.get("error")]
    if not rows:
        raise ConfigError("no prediction records")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from ragas import evaluate
    except ImportError as exc:
        raise missing_extra("ragas", "eval") from exc
    ragas_llm = ragas_emb = None
    if llm is not None:
        ragas_llm, ragas_emb = ragas_llm_and_embeddings(llm, embedding_url=embedding_url,
                                                        embedding_model=embedding_model)
    with_ev = [r for r in rows if r.get("gold_evidence")]
    if metrics is None:
        plan = list(zip(_default_metrics(with_evidence=bool(with_ev), with_llm=llm is not None), (rows, with_ev)))
    else:
        plan = [(list(metrics), rows)]
    out: dict[str, Any] = {"n": len(rows)}
    if metrics is None and with_ev:
        out["n_with_gold_evidence"] = len(with_ev)
    if metrics is None:
        skipped = skipped_metrics(with_evidence=bool(with_ev), with_llm=llm is not None)
        if skipped:
            out["skipped"] = skipped
    for ms, subset in plan:
        if not ms or not subset:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = evaluate(to_ragas_dataset(subset), metrics=ms, llm=ragas_llm, embeddings=ragas_emb,
                              show_progress=progress, raise_exceptions=False)
        df = result.to_pandas()  # type: ignore[union-attr]
        for m in ms:
            col = df[m.name]
            failed = int(col.isna().sum())
            out[m.name] = round(float(col.mean()), 4) if failed < len(col) else None
            if failed:
                out[f"{m.name}_failed"] = failed
    return out


# ---------------------------------------------------------------------------
# Tool calls (TempTool traces)
# ---------------------------------------------------------------------------

def run_sync(coro: Any) -> Any:
    """Run a coroutine to completion from sync code, inside a running event loop or not.

    ``asyncio.run`` refuses to start while a loop runs (a Jupyter notebook, an async web
    handler); there the coroutine runs on its own loop in a worker thread instead, and
    this call blocks until it is done.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _calls(v: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(v, list):
        raise DataFormatError(f"{where}: tool calls must be a list, got {type(v).__name__}")
    out = []
    for i, c in enumerate(v):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise DataFormatError(f"{where}: tool call #{i} has no 'name' string: {c!r:.120}")
        args = c.get("args", c.get("arguments", {}))
        if not isinstance(args, dict):
            raise DataFormatError(f"{where}: tool call #{i} ({c['name']}) has arguments that are not an object")
        out.append({"name": c["name"], "args": args})
    return out


def _key(r: dict[str, Any]) -> str:
    q = r.get("quid", r.get("id"))
    return f"id:{q}" if q is not None else f"q:{r.get('question')}"


def load_reference_tool_calls(path: str | os.PathLike[str]) -> dict[str, list[dict[str, Any]]]:
    """Reference tool calls by question, from a question file (``reference_tool_calls``) or
    another run file (its ``tool_calls``, e.g. the no-LLM reasoner's trace)."""
    p = Path(path)
    out: dict[str, list[dict[str, Any]]] = {}
    for lineno, r in iter_jsonl(p):
        if not isinstance(r, dict) or r.get("record") == "run":
            continue
        calls = r.get("reference_tool_calls", r.get("tool_calls"))
        if calls is None:
            continue
        out[_key(r)] = _calls(calls, f"{p}:{lineno}")
    if not out:
        raise DataFormatError(f"{p} holds no 'reference_tool_calls' or 'tool_calls' on any line")
    return out


def tool_call_scores(records: Sequence[dict[str, Any]] | str | os.PathLike[str], *,
                     reference: str | os.PathLike[str] | dict[str, list[dict[str, Any]]] | None = None,
                     progress: bool = False) -> dict[str, Any]:
    """RAGAS ``ToolCallAccuracy`` (strict order) of each record's ``tool_calls`` trace.

    The reference sequence of a record is its ``reference_tool_calls`` (copied by
    ``chronorag eval`` from the question file) or, with ``reference``, the calls that file
    holds for the same question (matched by ``quid``/``id``, else question text).

    Returns
    -------
    dict
        ``tool_call_accuracy`` (mean), ``n`` and ``exact_sequence`` (share of traces whose
        tool names match the reference in order).

    Raises
    ------
    DataFormatError
        A record without a trace or without a reference, naming ``file:line``.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from ragas.dataset_schema import MultiTurnSample
            from ragas.messages import AIMessage, HumanMessage, ToolCall
            from ragas.metrics import ToolCallAccuracy
    except ImportError as exc:
        raise missing_extra("ragas", "eval") from exc
    src = str(records) if isinstance(records, (str, os.PathLike)) else "records"
    rows = load_predictions(records) if isinstance(records, (str, os.PathLike)) else list(records)
    refs = load_reference_tool_calls(reference) if isinstance(reference, (str, os.PathLike)) else reference
    metric = ToolCallAccuracy(strict_order=True)
    scores, exact = [], 0
    it: Iterable[dict[str, Any]] = rows
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(rows, desc="tool-call accuracy", unit="q")
    for i, r in enumerate(it):
        where = r.get("_where") or (f"{src}:{r['_line']}" if "_line" in r else f"record #{i}")
        if "tool_calls" not in r:
            raise DataFormatError(f"{where}: no 'tool_calls' trace; run `chronorag eval --method tools` "
                                  f"(or a method that records its tool calls)")
        pred = _calls(r["tool_calls"], where)
        if refs is not None:
            if _key(r) not in refs:
                raise DataFormatError(f"{where}: the reference file has no tool calls for this question ({_key(r)})")
            ref = refs[_key(r)]
        elif "reference_tool_calls" in r:
            ref = _calls(r["reference_tool_calls"], where)
        else:
            raise DataFormatError(f"{where}: no 'reference_tool_calls'; pass --reference FILE (a question file "
                                  f"with reference_tool_calls, or another run file whose traces are the reference)")
        sample = MultiTurnSample(
            user_input=[HumanMessage(content=r["question"]),
                        AIMessage(content="", tool_calls=[ToolCall(name=c["name"], args=c["args"]) for c in pred])],
            reference_tool_calls=[ToolCall(name=c["name"], args=c["args"]) for c in ref])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores.append(float(run_sync(metric.multi_turn_ascore(sample))))
        exact += [c["name"] for c in pred] == [c["name"] for c in ref]
    if not scores:
        raise ConfigError("no records to score")
    return {"n": len(scores), "tool_call_accuracy": round(sum(scores) / len(scores), 4),
            "exact_sequence": round(exact / len(scores), 4)}
