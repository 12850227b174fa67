"""DeliveryPlan's three action formats, each decoded into a ``PlannerOutput`` (cited cue ids and
a plan) for the case side on show.

* ``typed`` (the base env's space): a Dict of ``cite`` (MultiBinary over the case's records, in
  the order the observation lists them), one Discrete per plan field (index into its levels) and
  ``emphasis`` (MultiBinary over the utterance's words). It can express every plan and citation.
* ``discrete`` (the default and the one PPO trains on): Discrete over ``CATALOGUE``, 45 coarse
  choices of (cite no recording, the first or the second recording listed; the plan-table row
  of one of the 15 keys); the utterance record is cited when the chosen plan emphasises a word
  (it licenses which one). It is the typed space folded to the decisions the task is about
  (which recording is the evidence, which key it supports), small enough for a policy head. A
  recording is named by its place among the listed recordings, never by its role, so the
  action space does not say which recording is the source.
* ``text``: a JSON object ``{"evidence": [cue ids], "plan": {seven fields, "emphasis": [word
  indices]}}``, nothing else. The parser is strict: anything that is not exactly that object
  (extra or missing keys, a level outside a field's levels, an emphasis index outside the
  utterance, trailing text, a code fence) is ``MALFORMED`` (the verifier scores it as an empty
  citation and no plan). Cue ids not in the case are valid syntax and count as hallucinated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from hear_gym.core.json_reply import json_depth
from hear_gym.envs.deliveryplan.cases import KIND_OF, RECORD_NAMES, SOURCE_KIND, UTTERANCE_KIND
from hear_gym.envs.deliveryplan.plan import FIELD_LEVELS, PLAN_FIELDS, SOURCE_KEYS, DeliveryPlan
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE
from hear_gym.envs.deliveryplan.verifier import MALFORMED, PlannerOutput

N_RECORDS = len(RECORD_NAMES)  # records per case side
N_RECORDINGS = sum(KIND_OF[name] == SOURCE_KIND for name in RECORD_NAMES)
MAX_JSON_DEPTH = 8  # a well-formed reply nests 3 deep (object, plan, emphasis list)
MAX_WORDS = 6  # words of the longest utterance
# (which listed recording to cite: None or its place among the recordings, the key whose plan)
CATALOGUE: tuple[tuple[int | None, tuple[str, str]], ...] = tuple(
    (cited, key) for cited in (None, *range(N_RECORDINGS)) for key in SOURCE_KEYS
)
N_CATALOGUE = len(CATALOGUE)


def typed_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "cite": spaces.MultiBinary(N_RECORDS),
            **{name: spaces.Discrete(len(FIELD_LEVELS[name])) for name in PLAN_FIELDS},
            "emphasis": spaces.MultiBinary(MAX_WORDS),
        }
    )


def decode_typed(action: dict[str, Any], listed: Sequence[str], n_words: int) -> PlannerOutput:
    """A typed action as a planner output citing ``listed`` (the records' ids in listing order);
    a malformed Dict (missing keys, out of range) raises ``ValueError`` (a programming error, not
    an agent's reply)."""
    if not isinstance(action, dict) or set(action) != {"cite", *PLAN_FIELDS, "emphasis"}:
        raise ValueError(
            f"typed action must be a dict with keys cite, {', '.join(PLAN_FIELDS)}, emphasis; got {action!r}"
        )
    cite = np.asarray(action["cite"]).reshape(-1)
    emphasis = np.asarray(action["emphasis"]).reshape(-1)
    if cite.shape != (N_RECORDS,) or emphasis.shape != (MAX_WORDS,):
        raise ValueError(f"cite must have {N_RECORDS} and emphasis {MAX_WORDS} entries")
    fields = {}
    for name in PLAN_FIELDS:
        index = int(np.asarray(action[name]).reshape(()))
        if not 0 <= index < len(FIELD_LEVELS[name]):
            raise ValueError(f"{name} index must be in [0, {len(FIELD_LEVELS[name])}), got {index}")
        fields[name] = FIELD_LEVELS[name][index]
    plan = DeliveryPlan(**fields, emphasis=frozenset(int(i) for i in np.flatnonzero(emphasis) if i < n_words))
    return PlannerOutput(frozenset(listed[i] for i in np.flatnonzero(cite)), plan)


def encode_typed(output: PlannerOutput, listed: Sequence[str]) -> dict[str, Any]:
    """The typed action that decodes to ``output`` over ``listed`` (citations outside it are
    dropped)."""
    if output.plan is None:
        raise ValueError("a malformed output has no typed action")
    cite = np.array([cid in output.citations for cid in listed], dtype=np.int8)
    emphasis = np.zeros(MAX_WORDS, dtype=np.int8)
    emphasis[sorted(output.plan.emphasis)] = 1
    return {
        "cite": cite,
        **{name: FIELD_LEVELS[name].index(output.plan.slot(name)) for name in PLAN_FIELDS},
        "emphasis": emphasis,
    }


def decode_catalogue(index: int, order: Sequence[str]) -> PlannerOutput:
    """Catalogue entry ``index`` with its citations named by record name, the records listed in
    ``order`` (record names)."""
    cited_recording, key = CATALOGUE[index]
    plan = PLAN_TABLE[key]
    recordings = [name for name in order if KIND_OF[name] == SOURCE_KIND]
    cited = set() if cited_recording is None else {recordings[cited_recording]}
    return PlannerOutput(frozenset(cited | ({UTTERANCE_KIND} if plan.emphasis else set())), plan)


def catalogue_index(cited_recording: int | None, key: tuple[str, str]) -> int:
    return CATALOGUE.index((cited_recording, key))


def format_reply(output: PlannerOutput) -> str:
    """The JSON reply the text format expects for ``output``."""
    if output.plan is None:
        raise ValueError("a malformed output has no reply")
    return json.dumps({"evidence": sorted(output.citations), "plan": output.plan.as_dict()})


def parse_reply(reply: str, n_words: int) -> PlannerOutput:
    """Strict JSON parse of a text reply; ``MALFORMED`` for anything else (never raises: a reply
    nesting deeper than ``MAX_JSON_DEPTH`` is malformed before ``json.loads`` recurses into it)."""
    if json_depth(reply) > MAX_JSON_DEPTH:
        return MALFORMED
    try:
        data = json.loads(reply)
    except (json.JSONDecodeError, TypeError):
        return MALFORMED
    if not isinstance(data, dict) or set(data) != {"evidence", "plan"}:
        return MALFORMED
    evidence, plan = data["evidence"], data["plan"]
    if (
        not isinstance(evidence, list)
        or not all(isinstance(c, str) for c in evidence)
        or not isinstance(plan, dict)
    ):
        return MALFORMED
    emphasis = plan.get("emphasis")
    if not isinstance(emphasis, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n_words for i in emphasis
    ):
        return MALFORMED
    try:
        parsed = DeliveryPlan.from_dict(plan)
    except (ValueError, TypeError):
        return MALFORMED
    return PlannerOutput(frozenset(evidence), parsed)


def replay_replies(record: dict) -> list[str] | None:
    """The replies of a text run as written, for ``hear-gym view``; None for a Discrete run, whose
    record keeps the parsed plans (with cue kinds, not the case's cue ids) rather than replies."""
    replies = list(record["replies"])
    return replies if all(replies) else None
