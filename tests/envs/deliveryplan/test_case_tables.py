"""The ``discrete`` format's kept decodings and scores (``case_tables``) hand out exactly what the
typed action each catalogue entry stands for earns, and every caller gets its own copies."""

import copy

import gymnasium as gym
import numpy as np

import hear_gym  # noqa: F401
from hear_gym.envs.deliveryplan.actions import N_CATALOGUE
from hear_gym.envs.deliveryplan.case_tables import case_tables
from hear_gym.envs.deliveryplan.cases import RECORD_NAMES
from hear_gym.envs.deliveryplan.verifier import score_pair

ENV_ID = "hear_gym/DeliveryPlan-v0"
CASES = ("vr-000", "vr-071")  # two source keys, both utterances


def _same(a, b) -> bool:
    """Equal values of equal types all the way down (arrays: dtype, shape and bytes)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def test_catalogue_steps_equal_their_typed_actions():
    discrete = gym.make(ENV_ID, split="all")
    typed = gym.make(ENV_ID, actions="typed", split="all")
    draws = np.random.default_rng(0)
    for case_id in CASES:
        for seed in range(40):
            options = {"item_id": case_id}
            assert _same(discrete.reset(seed=seed, options=options), typed.reset(seed=seed, options=options))
            for index in draws.integers(N_CATALOGUE, size=2):
                typed_action = typed.unwrapped.catalogue_typed(int(index))
                assert _same(discrete.step(int(index)), typed.step(typed_action))


def test_kept_pair_scores_are_those_of_the_two_plans():
    tables = case_tables("vr-071")
    for original in range(N_CATALOGUE):
        for edited in range(N_CATALOGUE):
            plans = (
                tables.play(0, original, RECORD_NAMES).output.plan,
                tables.play(1, edited, RECORD_NAMES[::-1]).output.plan,
            )
            assert tables.pair(original, edited) == score_pair(*plans, tables.case.declared_delta)


def test_every_caller_gets_its_own_copies():
    env = gym.make(ENV_ID, split="all")

    def play():
        return env.reset(seed=0, options={"item_id": "vr-010"}), env.step(4), env.step(19)

    expected = copy.deepcopy(play())
    for _ in range(2):
        (obs, info), first, last = play()
        for leaf in (obs["step"], obs["action_mask"], first[0]["action_mask"]):
            leaf[0] = 9
        for record in (info, first[4], last[4]):
            record["expected_plan"]["emphasis"].append(99)
            record["gold_evidence"].clear()
        for scores in (first[4]["scores"], last[4]["scores"], last[4]["pair_scores"]):
            scores.update(dict.fromkeys(scores, -1.0))
        episode = last[4]["episode"]
        episode["outputs"][0]["evidence"].clear()
        episode["outputs"][1]["plan"].clear()
        episode["declared_delta"].clear()
    assert _same(play(), expected)
