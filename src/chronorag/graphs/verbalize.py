"""Turn events into short English sentences for embedding, prompts and display.

ICEWS/CAMEO relation names are present-tense verb phrases ("Criticize or denounce",
"Make an appeal or request"). :func:`verbalize_event` puts the leading verb in the
past tense (and the second verb of a two-verb alternative such as "Criticize or
denounce"), so events read as reports of what happened:

>>> verbalize_event("European Central Bank", "Criticize or denounce", "Romania", "2010-08-30")
'On 2010-08-30, European Central Bank criticized or denounced Romania.'

Without a time the same sentence has no date prefix; that dateless form is what
chronorag embeds (see :mod:`chronorag.graphs.encoders`): the date is matched
symbolically, never through the embedding.
"""

from __future__ import annotations

import re

from chronorag.errors import ConfigError

__all__ = ["past_tense", "verbalize_event"]

_IRREGULAR = {
    "make": "made", "give": "gave", "take": "took", "hold": "held", "meet": "met",
    "bring": "brought", "seek": "sought", "fight": "fought", "shoot": "shot",
    "lead": "led", "send": "sent", "spend": "spent", "build": "built", "buy": "bought",
    "sell": "sold", "tell": "told", "say": "said", "find": "found", "win": "won",
    "lose": "lost", "keep": "kept", "leave": "left", "put": "put", "set": "set",
    "cut": "cut", "hit": "hit", "let": "let", "go": "went", "do": "did", "have": "had",
    "be": "was", "begin": "began", "break": "broke", "choose": "chose", "come": "came",
    "draw": "drew", "drive": "drove", "eat": "ate", "fall": "fell", "feel": "felt",
    "flee": "fled", "forbid": "forbade", "forgive": "forgave", "freeze": "froze",
    "get": "got", "grow": "grew", "hide": "hid", "know": "knew", "lay": "laid",
    "mean": "meant", "pay": "paid", "ride": "rode", "rise": "rose", "run": "ran",
    "see": "saw", "shake": "shook", "speak": "spoke", "stand": "stood", "steal": "stole",
    "strike": "struck", "swear": "swore", "teach": "taught", "think": "thought",
    "throw": "threw", "undertake": "undertook", "withdraw": "withdrew", "write": "wrote",
    "bear": "bore", "bind": "bound", "wage": "waged", "host": "hosted", "open": "opened",
    "visit": "visited", "offer": "offered", "order": "ordered", "enter": "entered",
}
_WORD = re.compile(r"^[A-Za-z]+$")


def past_tense(verb: str) -> str:
    """Past tense of an English verb (irregular table, then spelling rules).

    Parameters
    ----------
    verb : str
        A single lower- or mixed-case word.
    """
    if not isinstance(verb, str) or not _WORD.match(verb):
        raise ConfigError(f"past_tense needs a single alphabetic word, got {verb!r}")
    v = verb.lower()
    if v in _IRREGULAR:
        return _IRREGULAR[v]
    if v.endswith("e"):
        return v + "d"
    if len(v) > 2 and v.endswith("y") and v[-2] not in "aeiou":
        return v[:-1] + "ied"
    if (
        len(v) in (3, 4)
        and v[-1] not in "aeiouwxy"
        and v[-2] in "aeiou"
        and v[-3] not in "aeiou"
    ):
        return v + v[-1] + "ed"  # stop -> stopped, ban -> banned
    return v + "ed"


def _relation_phrase(relation: str) -> str:
    words = relation.strip().split()
    if not words or not _WORD.match(words[0]):
        return relation.strip()
    out = [past_tense(words[0])] + [w.lower() if w[:1].isupper() and w[1:].islower() else w for w in words[1:]]
    # "Criticize or denounce": both halves are single verbs
    if len(words) == 3 and words[1].lower() in ("or", "and") and _WORD.match(words[2]):
        out[2] = past_tense(words[2])
    return " ".join(out)


def verbalize_event(
    subject: str, relation: str, object: str, time: str | None = None
) -> str:
    """One sentence describing an event.

    Parameters
    ----------
    subject, relation, object : str
        The event's names as stored (kept byte-exact in the sentence).
    time : str, optional
        The event's time as text (``"2010-08-30"`` or ``"2010-08-30/2010-09-02"``);
        omitted, the sentence has no date.

    Returns
    -------
    str
        ``"On 2010-08-30, European Central Bank criticized or denounced Romania."``
    """
    for name, value in (("subject", subject), ("relation", relation), ("object", object)):
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"verbalize_event needs a non-empty {name}, got {value!r}")
    core = f"{subject} {_relation_phrase(relation)} {object}."
    if time is None:
        return core
    if "/" in time:
        start, end = time.split("/", 1)
        return f"From {start} to {end}, {core}"
    return f"On {time}, {core}"
