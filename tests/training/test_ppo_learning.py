"""The learning tier (``pytest -m learning``): PPO must learn on Hear2Act, held out. On a fixed
seed, a short MaskablePPO run on the T features (twin users in training, so nothing is learned
by heart) beats its own untrained policy (the same seed and network, learning rate 0: the
weights it starts from) on the held-out test scenarios, paired by episode, with a 95% CI above
zero. Each case takes about a CPU minute; with learning broken (learning rate 0) the contrast is
exactly zero and the test fails."""

from __future__ import annotations

import functools

import pytest

pytest.importorskip("sb3_contrib")
from agents.ppo import PPOAgent  # noqa: E402
from hear_gym.core.registry import family  # noqa: E402
from hear_gym.core.run_config import Cell, RunConfig  # noqa: E402
from hear_gym.eval.pipeline import evaluate  # noqa: E402
from training.ppo.train import PPOSettings, train  # noqa: E402

pytestmark = pytest.mark.learning

HEAR2ACT = "hear_gym/Hear2Act-v0"
RUN = dict(
    env_id=HEAR2ACT,
    access="T",
    train_env_options={"hidden_users": "resample"},
    n_envs=8,
    n_steps=128,
    batch_size=256,
    eval_every=0,
    eval_limit=8,  # the trainer's own evaluation; the test's is paired, below
    wandb_project=None,
    progress=False,
    seed=0,
)
CASES = {
    "mlp, explicit feedback": dict(
        env_options={"feedback": "explicit", "turn_cost": 0.05}, total_steps=30_000
    ),
    "per_option, prosody feedback": dict(
        env_options={"feedback": "prosody", "turn_cost": 0.05}, policy="per_option", total_steps=30_000
    ),
}
ROLLOUTS = 2  # per test scenario


def trained_and_untrained(out, case: dict) -> dict[str, str]:
    """Checkpoint folders: the trained policy, and the same run at learning rate 0 for one
    rollout (the network it started from)."""
    trained = train(PPOSettings(out=out / "trained", **RUN, **case))
    steps = RUN["n_envs"] * RUN["n_steps"]
    untrained = train(
        PPOSettings(out=out / "untrained", **RUN, **{**case, "total_steps": steps, "learning_rate": 0.0})
    )
    return {"trained": trained["checkpoint"], "untrained": untrained["checkpoint"]}


def paired_return(out, checkpoints: dict[str, str], env_options: dict) -> dict:
    """Return of ``trained`` minus ``untrained`` on every test scenario (same episode seeds), with
    its scenario-bootstrap CI."""
    env_family = family(HEAR2ACT)
    cell_options = tuple((key, str(env_options[key])) for key in env_family.cell_options)
    shared = tuple(sorted((k, v) for k, v in env_options.items() if k not in dict(cell_options)))
    cells = (Cell("untrained", "T", cell_options), Cell("trained", "T", cell_options))
    config = RunConfig(
        HEAR2ACT, cells, tuple(env_family.item_ids("test")), ROLLOUTS, seed=0, env_kwargs=shared
    )
    agents = {name: functools.partial(PPOAgent.from_checkpoint, path) for name, path in checkpoints.items()}
    (contrast,) = evaluate(out / "paired", config, agents, progress=False)["contrasts"]
    assert contrast["terms"] == [[1.0, cells[1].name], [-1.0, cells[0].name]]
    return contrast["metrics"]["return"]


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_ppo_beats_its_untrained_policy_on_held_out_scenarios(tmp_path, case):
    gain = paired_return(tmp_path, trained_and_untrained(tmp_path, case), case["env_options"])
    assert gain["low"] > 0, (
        f"held-out return gained {gain['point']:+.3f} [{gain['low']:+.3f}, {gain['high']:+.3f}]"
    )
