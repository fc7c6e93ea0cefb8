"""Typo-tolerant, case-insensitive entity linking with an acceptance margin.

:class:`EntityLinker` matches a phrase against a KG's entity names with
:mod:`rapidfuzz` (``token_sort_ratio`` on accent-free, lower-case, punctuation-free
keys). A phrase is linked only when

- the best name scores at least ``threshold`` (0-100), and
- it beats the best *other* name by at least ``margin`` points.

Otherwise the phrase is not linked and :attr:`EntityLink.reason` says why, naming the
closest names: ``"'Emmanuel Macron' is not in the KG (closest: Emmanuel Eweta
Uduaghan, 0.63)"`` or ``"'Police' is ambiguous: Police (Nigeria) 0.92, Police (Niger)
0.91"``. A linked phrase whose runner-up is within ``close`` points names it too, so a
caller can show it.

No word lists: the only vocabulary is the KG's own entity names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from chronorag.errors import ArgumentTypeError, ConfigError

__all__ = ["EntityLink", "EntityLinker", "link_key"]

_PUNCT = re.compile(r"[^a-z0-9]+")


def link_key(text: str) -> str:
    """The matching key of a name or phrase: accents stripped, lower case, words only."""
    if not isinstance(text, str):
        raise ArgumentTypeError(f"expected a string, got {type(text).__name__}")
    if text.isascii():  # most names: nothing to decompose
        s = text.lower().replace("'s ", " ")
    else:
        s = unicodedata.normalize("NFKD", text)
        s = "".join(c for c in s if not unicodedata.combining(c)).lower().replace("'s ", " ")
    return _PUNCT.sub(" ", s).strip()


@dataclass(frozen=True)
class EntityLink:
    """Result of linking one phrase.

    Attributes
    ----------
    phrase : str
        What was linked.
    name : str or None
        The KG name, or ``None`` when the phrase is not linked.
    score : float
        Similarity of the best name, 0-1.
    runner_up : str or None
        The best other name.
    runner_up_score : float
        Its similarity, 0-1.
    reason : str
        Why the phrase was not linked, or a note about a close runner-up ("" otherwise).
    """

    phrase: str
    name: str | None
    score: float
    runner_up: str | None = None
    runner_up_score: float = 0.0
    reason: str = ""
    candidates: list[tuple[str, float]] = field(default_factory=list)

    @property
    def linked(self) -> bool:
        """True when the phrase was linked to a name."""
        return self.name is not None


class EntityLinker:
    """Link phrases to entity names, case-insensitively and tolerating typos.

    Parameters
    ----------
    names : sequence of str
        The KG's entity names.
    threshold : float
        Lowest accepted similarity, 0-100 (default 88: one or two typos in a
        two-word name).
    margin : float
        Points the best name must lead the runner-up by (default 4).
    close : float
        A linked name's runner-up within this many points is named in ``reason``.
    """

    def __init__(self, names: Sequence[str], *, threshold: float = 88.0, margin: float = 4.0,
                 close: float = 8.0) -> None:
        if len(names) == 0:
            raise ConfigError("cannot link to an empty vocabulary")
        if not 0 < threshold <= 100:
            raise ConfigError(f"threshold must be in (0, 100], got {threshold}")
        if margin < 0 or close < 0:
            raise ConfigError(f"margin and close must be >= 0, got {margin}, {close}")
        self.names = list(names)
        self.threshold, self.margin, self.close = float(threshold), float(margin), float(close)
        self._keys = [link_key(n) for n in self.names]
        self._exact: dict[str, list[int]] = {}
        for i, k in enumerate(self._keys):
            self._exact.setdefault(k, []).append(i)

    def exact(self, phrase: str) -> str | None:
        """The one name whose key equals the phrase's, else ``None``."""
        hits = self._exact.get(link_key(phrase), [])
        return self.names[hits[0]] if len(hits) == 1 else None

    def link(self, phrase: str, *, threshold: float | None = None) -> EntityLink:
        """Link ``phrase`` (see the module docstring for the acceptance rule)."""
        from rapidfuzz import fuzz, process

        if not isinstance(phrase, str) or not phrase.strip():
            raise ConfigError(f"cannot link an empty phrase: {phrase!r}")
        thr = self.threshold if threshold is None else float(threshold)
        key = link_key(phrase)
        hits = self._exact.get(key, [])
        if len(hits) == 1:
            return EntityLink(phrase, self.names[hits[0]], 1.0, candidates=[(self.names[hits[0]], 1.0)])
        top = process.extract(key, self._keys, scorer=fuzz.token_sort_ratio, limit=6)
        cands: list[tuple[str, float]] = []
        for _, score, i in top:
            name = self.names[i]
            if all(name != n for n, _ in cands):
                cands.append((name, round(score / 100, 3)))
        if not cands:
            return EntityLink(phrase, None, 0.0, reason=f"{phrase!r} is not in the KG")
        best, s1 = cands[0]
        second, s2 = cands[1] if len(cands) > 1 else (None, 0.0)
        if len(hits) > 1:
            names = [self.names[i] for i in hits]
            return EntityLink(phrase, None, 1.0, names[1], 1.0, candidates=cands,
                              reason=f"{phrase!r} is ambiguous: {', '.join(names[:4])}")
        if s1 * 100 < thr:
            return EntityLink(phrase, None, s1, second, s2, candidates=cands,
                              reason=f"{phrase!r} is not in the KG (closest: {best}, {s1:.2f})")
        if (s1 - s2) * 100 < self.margin:
            return EntityLink(phrase, None, s1, second, s2, candidates=cands,
                              reason=f"{phrase!r} is ambiguous: {best} {s1:.2f}, {second} {s2:.2f}")
        note = f"{phrase!r} read as {best} ({s1:.2f}); runner-up {second} ({s2:.2f})" \
            if second is not None and (s1 - s2) * 100 < self.close else ""
        return EntityLink(phrase, best, s1, second, s2, reason=note, candidates=cands)
