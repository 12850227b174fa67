"""DeliveryPlan's action as one named tool (``hear_gym.core.tools``): ``plan(evidence, rate,
pitch_level, pitch_range, energy, pause, contour, voice_quality, emphasis)`` for the side of the
case on show. A call writes the env's own strict JSON reply, so a value the grammar refuses (a
level that does not exist, an emphasis index past the utterance) is the env's malformed outcome,
as for a text agent; an emphasis list that is not comma-separated integers is an invalid call."""

from __future__ import annotations

import json

from hear_gym.core.tools import ActionTool, InvalidCall, ToolParam, ToolSet
from hear_gym.envs.deliveryplan.plan import FIELD_LEVELS, PLAN_FIELDS

INSTRUCTION = (
    "You plan how a fixed utterance should be spoken, from the cited evidence records. Call the plan "
    "tool once for the case on show: cite the cue ids that license your plan and give every field."
)


def _ids(listed: str) -> list[str]:
    return [part.strip() for part in listed.split(",") if part.strip()]


def _indices(listed: str) -> list[int]:
    try:
        return sorted({int(part) for part in _ids(listed)})
    except ValueError:
        raise InvalidCall(f"emphasis must be comma-separated word indices, got {listed!r}") from None


def _plan(env, evidence: str, emphasis: str, **fields: str) -> str:
    plan = {name: fields[name] for name in PLAN_FIELDS} | {"emphasis": _indices(emphasis)}
    return json.dumps({"evidence": _ids(evidence), "plan": plan})


TOOLS = ToolSet(
    tools=(
        ActionTool(
            "plan",
            "Give the delivery plan for the case on show and the evidence it rests on.",
            _plan,
            (
                ToolParam("evidence", str, "the cited cue ids, comma-separated (e.g. 'e417')"),
                *(ToolParam(name, str, f"one of {', '.join(FIELD_LEVELS[name])}") for name in PLAN_FIELDS),
                ToolParam("emphasis", str, "the emphasized word indices, comma-separated ('' for none)"),
            ),
        ),
    ),
    invalid_reply="",  # not JSON: the malformed outcome
    instruction=INSTRUCTION,
    text_access="T",
    shown=("text",),
)
