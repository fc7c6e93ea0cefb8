"""Semantic alignment of free-text entity and relation phrases to a KG vocabulary.

Two stages, as in TempTool-R1: embedding retrieval of the top-``n`` (50) candidate
names, then a reranker picks the top-1. Deterministic: ties break by name order.

Rerankers
---------
``LexicalReranker`` (offline default)
    ``score = cosine + 0.6 * token_F1 + 0.4 * exact``, where tokens are normalised
    (lower-case, punctuation and filler words dropped, plural ``-s`` stripped,
    nationality adjectives mapped to their country: "Thai" -> "thailand"), so
    "the Thai military" matches "Military (Thailand)" and "citizens of Norway"
    matches "Citizen (Norway)". ``exact`` is 1 when the normalised token multisets
    are equal. An optional ``prior`` (e.g. "this entity has events with that
    relation") adds up to ``prior_weight``.
``LLMReranker``
    Asks an LLM to pick one numbered candidate as JSON ``{"choice": N}`` (own prompt
    below); a failed pick falls back to the lexical order and is recorded.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from chronorag.errors import ArgumentTypeError, ConfigError, LLMError
from chronorag.graphs.encoders import Encoder
from chronorag.graphs.text import stem_word

__all__ = [
    "Alignment",
    "NameAligner",
    "relation_tokens",
    "LexicalReranker",
    "LLMReranker",
    "normalise_tokens",
    "RERANK_PROMPT",
    "RERANK_SCHEMA",
]

_FILLER = {
    "the", "a", "an", "of", "for", "in", "on", "at", "to", "by", "and", "or", "s", "its",
    "their", "his", "her", "with", "from", "about", "against",
}

# nationality adjective / demonym -> country token(s); general English, not dataset-specific
_DEMONYMS = {
    "afghan": "afghanistan", "albanian": "albania", "algerian": "algeria", "american": "united states",
    "angolan": "angola", "argentine": "argentina", "argentinian": "argentina", "armenian": "armenia",
    "australian": "australia", "austrian": "austria", "azerbaijani": "azerbaijan", "bahraini": "bahrain",
    "bangladeshi": "bangladesh", "belarusian": "belarus", "belgian": "belgium", "bolivian": "bolivia",
    "bosnian": "bosnia", "brazilian": "brazil", "british": "united kingdom", "bulgarian": "bulgaria",
    "burmese": "myanmar", "burundian": "burundi", "cambodian": "cambodia", "cameroonian": "cameroon",
    "canadian": "canada", "chadian": "chad", "chilean": "chile", "chinese": "china", "colombian": "colombia",
    "congolese": "congo", "croatian": "croatia", "cuban": "cuba", "cypriot": "cyprus", "czech": "czech republic",
    "danish": "denmark", "dutch": "netherlands", "ecuadorian": "ecuador", "egyptian": "egypt",
    "emirati": "united arab emirates", "eritrean": "eritrea", "estonian": "estonia", "ethiopian": "ethiopia",
    "european": "europe", "filipino": "philippines", "philippine": "philippines", "finnish": "finland",
    "french": "france", "georgian": "georgia", "german": "germany", "ghanaian": "ghana", "greek": "greece",
    "guinean": "guinea", "haitian": "haiti", "hungarian": "hungary", "icelandic": "iceland", "indian": "india",
    "indonesian": "indonesia", "iranian": "iran", "iraqi": "iraq", "irish": "ireland", "israeli": "israel",
    "italian": "italy", "ivorian": "cote divoire", "jamaican": "jamaica", "japanese": "japan",
    "jordanian": "jordan", "kazakh": "kazakhstan", "kenyan": "kenya", "korean": "korea", "kosovar": "kosovo",
    "kuwaiti": "kuwait", "kyrgyz": "kyrgyzstan", "lao": "laos", "laotian": "laos", "latvian": "latvia",
    "lebanese": "lebanon", "liberian": "liberia", "libyan": "libya", "lithuanian": "lithuania",
    "macedonian": "macedonia", "malagasy": "madagascar", "malawian": "malawi", "malaysian": "malaysia",
    "malian": "mali", "maldivian": "maldives", "mauritanian": "mauritania", "mexican": "mexico",
    "moldovan": "moldova", "mongolian": "mongolia", "moroccan": "morocco", "mozambican": "mozambique",
    "namibian": "namibia", "nepalese": "nepal", "nepali": "nepal", "nicaraguan": "nicaragua",
    "nigerian": "nigeria", "nigerien": "niger", "norwegian": "norway", "omani": "oman",
    "pakistani": "pakistan", "palestinian": "palestine", "panamanian": "panama", "paraguayan": "paraguay",
    "peruvian": "peru", "polish": "poland", "portuguese": "portugal", "qatari": "qatar",
    "romanian": "romania", "russian": "russia", "rwandan": "rwanda", "saudi": "saudi arabia",
    "senegalese": "senegal", "serbian": "serbia", "singaporean": "singapore", "slovak": "slovakia",
    "slovenian": "slovenia", "somali": "somalia", "south african": "south africa", "spanish": "spain",
    "sri lankan": "sri lanka", "sudanese": "sudan", "swedish": "sweden", "swiss": "switzerland",
    "syrian": "syria", "taiwanese": "taiwan", "tajik": "tajikistan", "tanzanian": "tanzania",
    "thai": "thailand", "tibetan": "tibet", "togolese": "togo", "tunisian": "tunisia", "turkish": "turkey",
    "turkmen": "turkmenistan", "ugandan": "uganda", "ukrainian": "ukraine", "uruguayan": "uruguay",
    "uzbek": "uzbekistan", "venezuelan": "venezuela", "vietnamese": "vietnam", "yemeni": "yemen",
    "zambian": "zambia", "zimbabwean": "zimbabwe", "us": "united states", "uk": "united kingdom",
    "un": "united nations", "eu": "european union",
}
_TOKEN = re.compile(r"[a-z0-9]+")


def _stem(tok: str) -> str:
    if len(tok) > 4 and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is")):
        return tok[:-1]
    return tok


# ICEWS sector names as people write them (applied to entity phrases and names alike)
_ENTITY_PHRASES = [
    (r"\bministry of (?:foreign|external) affairs\b|\b(?:foreign|external affairs) ministry\b", "foreign affairs"),
    (r"\b(?:leader|premier|prime minister)\b", "head of government"),
    (r"\b(?:armed forces|army|troops|soldiers)\b", "military"),
    (r"\bpolice (?:force|officers?)\b", "police"),
]
_ENTITY_PHRASE_RES = [(re.compile(pat), rep) for pat, rep in _ENTITY_PHRASES]

# Relation words -> the words ICEWS/CAMEO relation names use. Policy: every entry is an
# inflection, a spelling variant or a dictionary (thesaurus) synonym of a word that occurs
# in a CAMEO relation name ("condemn" ~ "denounce" in "Criticize or denounce"). Entries
# that only mapped idiomatic question wordings onto CAMEO templates ("paid a visit" ->
# "make", "went" -> "visit", "receive" -> "host", "negative" -> "pessimistic",
# "offer"/"seek"/"hope"/"interest" -> "intent", "call" -> "telephone", "join" /
# "establish" -> "engage") were written against MultiTQ dev questions and are gone.
_RELATION_SYNONYMS = {
    "want": "intent", "wanted": "intent", "wish": "intent", "wished": "intent", "intend": "intent",
    "intention": "intent", "intentions": "intent", "willing": "intent", "willingness": "intent",
    "desire": "intent",
    "condemn": "criticize", "condemned": "criticize", "condemnation": "criticize", "denunciation": "denounce",
    "blame": "accuse", "blamed": "accuse", "criticise": "criticize", "criticised": "criticize",
    "criticism": "criticize", "commend": "praise", "commended": "praise", "laud": "praise",
    "lauded": "praise", "applaud": "praise", "ask": "appeal", "asked": "appeal", "request": "appeal",
    "requested": "appeal", "plead": "appeal", "remark": "comment", "remarks": "comment",
    "decline": "reject", "declined": "reject", "refuse": "reject", "refused": "reject",
    "phone": "telephone", "hosted": "host", "treaty": "agreement", "deal": "agreement",
    "attack": "fight", "attacked": "fight", "talk": "negotiate", "talks": "negotiation",
    "meeting": "meet", "met": "meet", "visited": "visit", "gave": "provide", "give": "provide",
    "urge": "make appeal", "urged": "make appeal", "slam": "criticize", "slammed": "criticize", "rebuke": "criticize",
    "rebuked": "criticize", "hail": "praise", "hailed": "praise", "kidnap": "abduct", "kidnapped": "abduct",
    "kidnapping": "abduct",
}


def relation_tokens(text: str) -> list[str]:
    """Tokens for relation matching: :func:`normalise_tokens`, synonyms, then stems."""
    out: list[str] = []
    for tok in normalise_tokens(text):
        syn = _RELATION_SYNONYMS.get(tok, tok)
        out.extend(stem_word(t) for t in syn.split())
    return out


def normalise_tokens(text: str) -> list[str]:
    """Tokens used for lexical matching (see the module docstring)."""
    if not isinstance(text, str):
        raise ArgumentTypeError(f"expected a string, got {type(text).__name__}")
    s = text.replace("\u00a0", " ").lower().replace("'s", "")
    for pat, rep in _ENTITY_PHRASE_RES:
        s = pat.sub(rep, s)
    for two in ("south african", "sri lankan"):
        s = s.replace(two, _DEMONYMS[two])
    out: list[str] = []
    for tok in _TOKEN.findall(s):
        dem = _DEMONYMS.get(tok)
        parts = dem.split() if dem else [tok]
        for p in parts:
            if p not in _FILLER:
                out.append(_stem(p))
    return out


def acronym(name: str) -> str:
    """Initials of a name's capitalised words: ``"European Central Bank"`` -> ``"ECB"``."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", name.split("(")[0])
    return "".join(w[0] for w in words if w[0].isupper())


def _f1(a: Counter[str], b: Counter[str]) -> float:
    na, nb = sum(a.values()), sum(b.values())
    if not na or not nb:
        return 0.0
    common = sum((a & b).values())
    return 2 * common / (na + nb)


@dataclass(frozen=True)
class Alignment:
    """Result of aligning one phrase: the chosen name, its score, and the candidates seen."""

    query: str
    name: str
    index: int
    score: float
    candidates: list[tuple[str, float]] = field(default_factory=list)
    #: how the name was chosen: "lexical" (reranker score) or "embedding" (no shared word;
    #: chosen by the encoder's similarity with a margin, see ``TemporalKGTools.align_relation``)
    how: str = "lexical"
    note: str = ""


class Reranker(Protocol):
    """Picks scores for candidate names given the query phrase."""

    def score(self, query: str, names: Sequence[str], cosines: np.ndarray,
              prior: np.ndarray | None) -> np.ndarray:  # pragma: no cover - protocol
        """One score per candidate (higher is better)."""
        ...


class LexicalReranker:
    """Offline reranker: cosine + token F1 + exact-match bonus (+ optional prior)."""

    def __init__(self, *, f1_weight: float = 0.6, exact_weight: float = 0.4,
                 prior_weight: float = 0.3, qualifier_weight: float = 0.4,
                 tokenizer: Callable[[str], list[str]] = normalise_tokens) -> None:
        for name, w in (("f1_weight", f1_weight), ("exact_weight", exact_weight),
                        ("prior_weight", prior_weight)):
            if w < 0:
                raise ConfigError(f"{name} must be >= 0, got {w}")
        self.f1_weight, self.exact_weight, self.prior_weight = f1_weight, exact_weight, prior_weight
        self.qualifier_weight = qualifier_weight
        self.tokenizer = tokenizer
        self._cache: dict[str, Counter[str]] = {}
        self._qual: dict[str, set[str]] = {}

    def _toks(self, s: str) -> Counter[str]:
        c = self._cache.get(s)
        if c is None:
            c = Counter(self.tokenizer(s))
            self._cache[s] = c
            m = re.search(r"\(([^)]*)\)\s*$", s)
            self._qual[s] = set(self.tokenizer(m.group(1))) if m else set()
        return c

    def score(self, query: str, names: Sequence[str], cosines: np.ndarray,
              prior: np.ndarray | None = None) -> np.ndarray:
        q = Counter(self.tokenizer(query))
        out = np.asarray(cosines, dtype=np.float64).copy()
        for i, n in enumerate(names):
            t = self._toks(n)
            out[i] += self.f1_weight * _f1(q, t) + self.exact_weight * float(bool(q) and q == t)
            qual = self._qual[n]  # "(Thailand)" in "Military (Thailand)": must be in the query
            if qual:
                out[i] += self.qualifier_weight * (1.0 if qual <= set(q) else -1.0)
        if prior is not None:
            out += self.prior_weight * np.asarray(prior, dtype=np.float64)
        return out


RERANK_PROMPT = (
    "A question mentions the phrase \"{query}\". Which of these knowledge-graph {kind} names "
    "does it refer to?\n{listing}\n\nReply with a JSON object {{\"choice\": N}} where N is the number "
    "of the best match, or 0 when none of them fits."
)

#: structured output of the reranker (vLLM enforces it through ``response_format``)
RERANK_SCHEMA = {
    "type": "object",
    "properties": {"choice": {"type": "integer", "minimum": 0}},
    "required": ["choice"],
    "additionalProperties": False,
}


class LLMReranker:
    """Reranker that asks an LLM to pick one numbered candidate.

    The LLM (anything :func:`~chronorag.integrations.llm.resolve_llm` accepts) is asked
    for ``{"choice": N}`` as structured output, so a reasoning preamble or a wordy
    reply cannot break it; the reply is parsed after reasoning blocks are stripped and
    retried once. The pick gets +1 over the lexical score, which breaks ties. When the
    LLM fails (no valid JSON twice, a number outside the list, a failed call) the
    lexical order stands, ``failures`` counts it and a ``"temptool.rerank_lexical"``
    fallback is recorded (eval reports the counts per question).
    """

    def __init__(self, llm: Any, *, kind: str = "entity", max_candidates: int = 20) -> None:
        from chronorag.integrations.llm import resolve_llm

        chat = resolve_llm(llm)
        if chat is None:
            raise LLMError("LLMReranker needs an LLM (a LlamaIndex LLM, a LangChain chat model or a "
                           "configured LLMConfig)")
        if max_candidates < 1:
            raise ConfigError(f"max_candidates must be >= 1, got {max_candidates}")
        self.llm = chat
        self.kind = kind
        self.max_candidates = max_candidates
        self.lexical = LexicalReranker()
        self.failures = 0

    def score(self, query: str, names: Sequence[str], cosines: np.ndarray,
              prior: np.ndarray | None = None) -> np.ndarray:
        from chronorag.integrations.llm import record_fallback

        base = self.lexical.score(query, names, cosines, prior)
        order = np.argsort(-base, kind="stable")[: self.max_candidates]
        listing = "\n".join(f"{j + 1}. {names[i]}" for j, i in enumerate(order))
        msgs = [{"role": "user", "content": RERANK_PROMPT.format(query=query, kind=self.kind, listing=listing)}]
        try:
            reply = self.llm.complete_json(msgs, schema=RERANK_SCHEMA, name="rerank")
            choice: Any = reply.get("choice") if isinstance(reply, dict) else reply
            n = int(choice)
        except (LLMError, TypeError, ValueError) as exc:
            self.failures += 1
            record_fallback("temptool.rerank_lexical", f"{query!r}: {exc}")
            return base
        if 1 <= n <= len(order):
            base[order[n - 1]] += 1.0
        elif n != 0:
            self.failures += 1
            record_fallback("temptool.rerank_lexical", f"{query!r}: choice {n} not in 0..{len(order)}")
        return base


class NameAligner:
    """Align phrases to one vocabulary (entity or relation names).

    Parameters
    ----------
    names : sequence of str
        The vocabulary.
    vectors : numpy.ndarray
        One unit vector per name (same encoder as ``encoder``).
    encoder : Encoder
        Embeds the query phrases.
    top_n : int
        Candidates kept from the embedding stage (default 50).
    reranker : Reranker, optional
        Defaults to :class:`LexicalReranker`.
    """

    def __init__(self, names: Sequence[str], vectors: np.ndarray, encoder: Encoder, *,
                 top_n: int = 50, reranker: Reranker | None = None) -> None:
        if len(names) == 0:
            raise ConfigError("cannot align to an empty vocabulary")
        if len(names) != len(vectors):
            raise ConfigError(f"{len(names)} names but {len(vectors)} vectors")
        if top_n < 1:
            raise ConfigError(f"top_n must be >= 1, got {top_n}")
        self.names = list(names)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.encoder = encoder
        self.top_n = top_n
        self.reranker: Reranker = reranker or LexicalReranker()
        self._norm_index: dict[tuple[str, ...], list[int]] = {}
        self._acronyms: dict[str, list[int]] = {}
        for i, n in enumerate(self.names):
            self._norm_index.setdefault(tuple(sorted(normalise_tokens(n))), []).append(i)
            acr = acronym(n)
            if len(acr) >= 2:
                self._acronyms.setdefault(acr, []).append(i)

    def is_exact(self, phrase: str) -> bool:
        """True when ``phrase`` normalises to exactly one name (aligned without embedding)."""
        return len(self._norm_index.get(tuple(sorted(normalise_tokens(phrase))), [])) == 1

    def align(self, phrase: str, *, prior: Callable[[np.ndarray], np.ndarray] | None = None,
              restrict: np.ndarray | None = None, vector: np.ndarray | None = None) -> Alignment:
        """Align one phrase.

        Parameters
        ----------
        phrase : str
            Free text ("the Thai military").
        prior : callable, optional
            Maps candidate indices to a [0, 1] prior per candidate.
        restrict : numpy.ndarray, optional
            Only these name indices can be chosen.
        vector : numpy.ndarray, optional
            The phrase's embedding, when the caller already has it.

        Notes
        -----
        A phrase whose normalised tokens equal exactly one name's is aligned to it
        without the embedding stage (when no prior or restriction is given).
        """
        if not isinstance(phrase, str) or not phrase.strip():
            raise ConfigError(f"cannot align an empty phrase: {phrase!r}")
        exact_hits = self._norm_index.get(tuple(sorted(normalise_tokens(phrase))), [])
        if len(exact_hits) == 1 and prior is None and restrict is None:
            # the phrase is a name up to case, articles, plurals and demonyms: no embedding needed
            i = exact_hits[0]
            return Alignment(query=phrase, name=self.names[i], index=i, score=2.0,
                             candidates=[(self.names[i], 2.0)])
        qv = self.encoder.encode([phrase])[0] if vector is None else np.asarray(vector, np.float32)
        if restrict is not None:
            pool = np.unique(np.asarray(restrict, dtype=np.int64))
            if pool.size == 0:
                raise ConfigError("restrict is empty: no name can be chosen")
        else:
            pool = None
        sims = self.vectors @ qv if pool is None else self.vectors[pool] @ qv
        k = min(self.top_n, sims.shape[0])
        top = np.argpartition(-sims, k - 1)[:k]
        cand = top if pool is None else pool[top]
        # exact normalised-name hits always compete, even when embeddings miss them
        exact = list(exact_hits)
        acr_hits = [i for tok in re.findall(r"\b[A-Z]{2,6}\b", phrase) for i in self._acronyms.get(tok, [])]
        exact += acr_hits
        extra = [i for i in exact if i not in set(cand.tolist()) and (pool is None or i in set(pool.tolist()))]
        if extra:
            cand = np.concatenate([cand, np.array(extra, dtype=np.int64)])
        cos = self.vectors[cand] @ qv
        names = [self.names[i] for i in cand]
        scores = self.reranker.score(phrase, names, cos, None if prior is None else prior(cand))
        if acr_hits:  # "ECB" spelled out as "European Central Bank"
            scores = scores + np.isin(cand, acr_hits) * 1.0
        order = np.lexsort((np.array(names), -scores))
        best = order[0]
        return Alignment(
            query=phrase, name=names[best], index=int(cand[best]), score=float(scores[best]),
            candidates=[(names[i], round(float(scores[i]), 4)) for i in order[:5]],
        )
