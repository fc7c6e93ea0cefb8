"""TempTool-R1 reward functions (Sec. 3.5), pure and deterministic.

- :func:`format_reward` (R_format in {0, 1}): the completion's tags (``think``,
  ``tool_call``, ``response``) are well formed and, given a reference trajectory,
  appear in the same order as in it.
- :func:`match_score` (r_match / S_max in [0, 1]) over predicted and gold tool calls:

  * r_name: Jaccard of the tool-name sets, but 0 when the prediction calls
    ``Get_time`` after a ``Get_head_entity``/``Get_tail_entity`` (the time a filter
    depends on must be resolved first);
  * r_param: for each gold call, Jaccard of its argument names with those of the
    predicted call matched to it (same name, in order);
  * r_value: for each gold argument, word-unigram F1 for entity/relation values
    (``head``, ``tail``, ``rel``) and exact match for the others (times, ``type``);
  * S_max = 1 + |G| + sum of |keys(G_j)|.

- :func:`correctness_reward`: ``6 * match_score - 3`` in [-3, 3], the ToolRL scale the
  paper keeps; :func:`total_reward` = R_format + R_correct.
- :func:`grpo_reward`: TRL ``GRPOTrainer``-compatible (``completions`` plus dataset
  columns as keyword lists -> list of floats).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from chronorag.errors import ArgumentTypeError, ConfigError
from chronorag.workflows.temptool.tagged_protocol import parse_turn

__all__ = [
    "format_reward",
    "match_score",
    "correctness_reward",
    "total_reward",
    "grpo_reward",
    "unigram_f1",
    "TEXT_ARGS",
]

TEXT_ARGS = frozenset({"head", "tail", "rel"})
_TIME_TOOLS = {"Get_time"}
_FILTER_TOOLS = {"Get_head_entity", "Get_tail_entity"}
_TAG = re.compile(r"<(/?)(think|tool_call|response|obs)>")


def unigram_f1(x: str, y: str) -> float:
    """``2 |W(x) & W(y)| / (|W(x)| + |W(y)|)`` over whitespace-split word multisets."""
    wx, wy = Counter(str(x).split()), Counter(str(y).split())
    n = sum(wx.values()) + sum(wy.values())
    return 0.0 if n == 0 else 2 * sum((wx & wy).values()) / n


def _tag_sequence(text: str) -> list[str] | None:
    """Tag kinds in order, or None when tags are unbalanced or nested."""
    seq: list[str] = []
    open_tag: str | None = None
    for m in _TAG.finditer(text):
        closing, name = m.group(1) == "/", m.group(2)
        if not closing:
            if open_tag is not None:
                return None
            open_tag = name
        else:
            if open_tag != name:
                return None
            open_tag = None
            if name != "obs":
                seq.append(name)
    return None if open_tag is not None else seq


def format_reward(completion: str, reference: str | None = None) -> float:
    """R_format: 1.0 when the tags are well formed (and in the reference's order), else 0.0.

    Without a reference, a valid completion has ``think`` before each action and ends
    with a ``response`` or a ``tool_call``; every ``tool_call`` block must parse.
    """
    if not isinstance(completion, str):
        raise ArgumentTypeError(f"completion must be a string, got {type(completion).__name__}")
    seq = _tag_sequence(completion)
    if not seq:
        return 0.0
    if parse_turn(completion).errors:
        return 0.0
    if reference is not None:
        ref = _tag_sequence(reference)
        if ref is None:
            raise ConfigError("the reference trajectory has unbalanced tags")
        return float(seq == ref)
    collapsed = [t for i, t in enumerate(seq) if i == 0 or t != seq[i - 1] or t == "think"]
    if collapsed[0] != "think" or collapsed[-1] not in ("response", "tool_call"):
        return 0.0
    return float(seq.count("response") <= 1 and (seq[-1] == "response" or "response" not in seq))


def _check_calls(calls: Sequence[dict[str, Any]], what: str) -> list[dict[str, Any]]:
    out = []
    for i, c in enumerate(calls):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise ConfigError(f"{what} call #{i} needs a 'name': {c!r}")
        args = c.get("arguments", c.get("args", {}))
        if not isinstance(args, dict):
            raise ConfigError(f"{what} call #{i} arguments must be a dict: {c!r}")
        out.append({"name": c["name"], "arguments": args})
    return out


def _order_valid(names: list[str]) -> bool:
    seen_filter = False
    for n in names:
        if n in _FILTER_TOOLS:
            seen_filter = True
        elif n in _TIME_TOOLS and seen_filter:
            return False
    return True


def match_score(predicted: Sequence[dict[str, Any]], gold: Sequence[dict[str, Any]]) -> float:
    """r_match / S_max in [0, 1] (see the module docstring).

    Parameters
    ----------
    predicted, gold : sequence of dict
        Tool calls ``{"name": str, "arguments": dict}`` in call order.
    """
    pred, ref = _check_calls(predicted, "predicted"), _check_calls(gold, "gold")
    if not ref:
        raise ConfigError("gold has no tool calls; match_score is undefined")
    s_max = 1 + len(ref) + sum(len(g["arguments"]) for g in ref)
    pnames, gnames = [p["name"] for p in pred], [g["name"] for g in ref]
    union = set(pnames) | set(gnames)
    r_name = len(set(pnames) & set(gnames)) / len(union) if _order_valid(pnames) else 0.0
    used = [False] * len(pred)
    r_param = r_value = 0.0
    for g in ref:
        j = next((i for i, p in enumerate(pred) if not used[i] and p["name"] == g["name"]), None)
        if j is None:
            continue
        used[j] = True
        pa, ga = pred[j]["arguments"], g["arguments"]
        keys = set(pa) | set(ga)
        r_param += len(set(pa) & set(ga)) / len(keys) if keys else 1.0
        for k, gv in ga.items():
            if k not in pa:
                continue
            if k in TEXT_ARGS:
                r_value += unigram_f1(str(pa[k]), str(gv))
            else:
                r_value += float(str(pa[k]).strip() == str(gv).strip())
    return (r_name + r_param + r_value) / s_max


def correctness_reward(predicted: Sequence[dict[str, Any]], gold: Sequence[dict[str, Any]]) -> float:
    """R_correct = 6 * match_score - 3, in [-3, 3]."""
    return 6.0 * match_score(predicted, gold) - 3.0


def _calls_in(completion: str) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    # a multi-turn completion: parse each <tool_call> block in order
    for block in re.findall(r"<tool_call>.*?(?:</tool_call>|$)", completion, flags=re.S):
        calls.extend(parse_turn(block).tool_calls)
    return calls


def total_reward(completion: str, gold: Sequence[dict[str, Any]], reference: str | None = None) -> float:
    """R_final = R_format + R_correct for one tagged-protocol completion."""
    return format_reward(completion, reference) + correctness_reward(_calls_in(completion), gold)


def grpo_reward(
    prompts: Sequence[Any] | None = None,
    completions: Sequence[Any] | None = None,
    gold_calls: Sequence[Sequence[dict[str, Any]]] | None = None,
    reference: Sequence[str | None] | None = None,
    **_: Any,
) -> list[float]:
    """A TRL ``GRPOTrainer`` reward function: one R_final per completion.

    ``completions`` are strings or chat messages (lists of ``{"role", "content"}``);
    ``gold_calls`` (and optionally ``reference``) are dataset columns, one per
    completion, as TRL passes them.
    """
    if completions is None or gold_calls is None:
        raise ConfigError("grpo_reward needs completions and the gold_calls column")
    if len(completions) != len(gold_calls):
        raise ConfigError(f"{len(completions)} completions but {len(gold_calls)} gold_calls")
    refs = list(reference) if reference is not None else [None] * len(completions)
    out = []
    for comp, gold, ref in zip(completions, gold_calls, refs):
        text = comp if isinstance(comp, str) else "".join(
            m.get("content", "") for m in comp if isinstance(m, dict))
        out.append(total_reward(text, gold, ref))
    return out
