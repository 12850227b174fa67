"""VoiceGate metrics over episode records, with group bootstrap CIs (paper section 3.4, App. B, G).

Every metric is a rate over a subset of records. The bootstrap unit is the item ``group``: a
speaker-switch pair keeps its same-speaker, switch and text-only inputs together, a held-out
command keeps its cue-validity variants together. Metrics are reported jointly, never as one
aggregate score:

* side-talk accuracy (acts on the assistant-directed utterance only);
* self-talk mute rate and false-trigger rate (any non-``[Mute]`` output);
* switch mute rate, always with same-speaker and text-only target-tool selection;
* false execution (a tool call where the target was ``[Mute]`` or an answer) and false rejection
  (``[Mute]`` where the target was a tool call or an answer);
* the cue-validity table: mute rate and matching-tool rate per condition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from hear_gym.stats.bootstrap import Estimate, RatioSums, ratio_ci

Record = dict[str, Any]
Predicate = Callable[[Record], bool]


def _kind(record: Record) -> str:
    return record["outcome"]["action"]["kind"]


def _is_mute(record: Record) -> bool:
    return _kind(record) == "mute"


def _matching_tool(record: Record) -> bool:
    """A call of the tool the command's words ask for (whatever the target)."""
    action = record["outcome"]["action"]
    return action["kind"] == "tool" and action["tool"] == record["command_tool"]


def _correct(record: Record) -> bool:
    return bool(record["outcome"]["correct"])


def rate(records: list[Record], subset: Predicate, success: Predicate, seed: int = 0) -> Estimate | None:
    """Share of ``subset`` records with ``success``; CI by resampling groups. None if empty."""
    chosen = [r for r in records if subset(r)]
    if not chosen:
        return None
    groups = sorted({r["group"] for r in chosen})
    index = {g: i for i, g in enumerate(groups)}
    numerator, denominator = np.zeros(len(groups)), np.zeros(len(groups))
    for r in chosen:
        denominator[index[r["group"]]] += 1
        numerator[index[r["group"]]] += success(r)
    return ratio_ci(RatioSums(numerator, denominator), seed=seed)


def _family(name: str, condition: str | None = None) -> Predicate:
    return lambda r: r["family"] == name and (condition is None or r["condition"] == condition)


def _target(*kinds: str) -> Predicate:
    return lambda r: r["target"]["kind"] in kinds


HEADLINE: dict[str, tuple[Predicate, Predicate]] = {
    "side_talk_accuracy": (_family("side_talk"), _correct),
    "self_talk_mute": (_family("self_talk"), _is_mute),
    "self_talk_false_trigger": (_family("self_talk"), lambda r: not _is_mute(r)),
    "switch_mute": (_family("speaker_switch", "switch"), _is_mute),
    "same_speaker_tool": (_family("speaker_switch", "same_speaker"), _correct),
    "text_only_tool": (_family("speaker_switch", "text_only"), _correct),
    "false_execution": (_target("mute", "answer"), lambda r: r["outcome"]["false_execution"]),
    "false_rejection": (_target("tool", "answer"), _is_mute),
    "malformed": (lambda r: True, lambda r: _kind(r) == "malformed"),
}


def episode_scalars(record: Record) -> dict[str, float]:
    """What a trainer logs per decision (``EnvFamily.episode_scalars``): the reward, correctness,
    and each headline rate whose subset the record belongs to (in percent)."""
    scalars = {"return": float(record["reward"]), "correct%": 100.0 * _correct(record)}
    for name, (subset, success) in HEADLINE.items():
        if subset(record):
            scalars[f"{name}%"] = 100.0 * bool(success(record))
    return scalars


def headline_metrics(records: list[Record]) -> dict[str, Estimate]:
    """The joint metrics that the records can support (families absent from a run are left out)."""
    out = {}
    for name, (subset, success) in HEADLINE.items():
        estimate = rate(records, subset, success)
        if estimate is not None:
            out[name] = estimate
    return out


def condition_table(records: list[Record], conditions: Iterable[str]) -> dict[str, dict[str, Estimate]]:
    """Per condition of one family: mute rate, matching-tool rate and target accuracy."""
    table = {}
    for condition in conditions:

        def subset(r: Record, c: str = condition) -> bool:
            return r["condition"] == c

        mute = rate(records, subset, _is_mute)
        if mute is not None:
            table[condition] = {
                "mute": mute,
                "matching_tool": rate(records, subset, _matching_tool),
                "accuracy": rate(records, subset, _correct),
            }
    return table
