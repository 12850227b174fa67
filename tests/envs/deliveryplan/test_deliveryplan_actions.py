"""The three action formats decode to the same planner outputs; the text parser is strict."""

import json

import pytest

from hear_gym.envs.deliveryplan.actions import (
    CATALOGUE,
    decode_catalogue,
    decode_typed,
    encode_typed,
    format_reply,
    parse_reply,
    typed_space,
)
from hear_gym.envs.deliveryplan.cases import KIND_OF, RECORD_NAMES, generate_cases
from hear_gym.envs.deliveryplan.plan_table import PLAN_TABLE
from hear_gym.envs.deliveryplan.verifier import MALFORMED, PlannerOutput

CASE = generate_cases()[17]
VIEW = CASE.original
LISTED = ("e101", "e202", "e303")  # the side's ids in listing order
ORACLE = PlannerOutput(frozenset(LISTED[:2]), VIEW.expected_plan)
N_WORDS = len(CASE.words)


def test_text_reply_round_trip():
    assert parse_reply(format_reply(ORACLE), N_WORDS) == ORACLE


def test_typed_round_trip_and_sampling():
    assert decode_typed(encode_typed(ORACLE, LISTED), LISTED, N_WORDS) == ORACLE
    space = typed_space()
    space.seed(0)
    for _ in range(20):
        out = decode_typed(space.sample(), LISTED, N_WORDS)
        assert out.citations <= set(LISTED) and out.plan is not None


@pytest.mark.parametrize("order", [RECORD_NAMES, RECORD_NAMES[::-1]])
def test_catalogue_covers_every_key_citing_no_recording_or_one_by_its_place(order):
    assert len(CATALOGUE) == 45
    recordings = [name for name in order if KIND_OF[name] == "source"]
    for index, (cited, key) in enumerate(CATALOGUE):
        out = decode_catalogue(index, order)
        assert out.plan == PLAN_TABLE[key]
        assert ("utterance" in out.citations) == bool(out.plan.emphasis)
        assert out.citations - {"utterance"} == (set() if cited is None else {recordings[cited]})


def _reply(**changes):
    data = json.loads(format_reply(ORACLE))
    for path, value in changes.items():
        if path.startswith("plan_"):
            data["plan"][path[5:]] = value
        else:
            data[path] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "not json",
        "[]",
        format_reply(ORACLE) + " thanks",
        "```json\n" + format_reply(ORACLE) + "\n```",
        _reply(extra=1),
        _reply(evidence="e101"),
        _reply(evidence=[1, 2]),
        _reply(plan_rate="fast"),
        _reply(plan_contour="high"),
        _reply(plan_emphasis=[N_WORDS]),
        _reply(plan_emphasis=[True]),
        _reply(plan_emphasis=[-1]),
        _reply(plan_emphasis="0"),
        _reply(plan_tempo="mid"),
        json.dumps({"evidence": [], "plan": {"rate": "mid"}}),
    ],
)
def test_anything_but_the_exact_object_is_malformed(reply):
    assert parse_reply(reply, N_WORDS) == MALFORMED


def test_unknown_cue_ids_are_valid_syntax_and_count_as_hallucinated():
    out = parse_reply(_reply(evidence=["e000"]), N_WORDS)
    assert out.citations == {"e000"} and not out.malformed


def test_typed_action_errors_are_clear():
    with pytest.raises(ValueError, match="keys"):
        decode_typed({"cite": [1, 1, 1]}, LISTED, N_WORDS)
    bad = encode_typed(ORACLE, LISTED) | {"rate": 3}
    with pytest.raises(ValueError, match="rate"):
        decode_typed(bad, LISTED, N_WORDS)
