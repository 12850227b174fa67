"""A fresh interpreter that never imports hear_gym makes every registered env through Gymnasium
alone: ``gymnasium.make("hear_gym:<id>")`` and ``gymnasium.make_vec`` (sync and async) with the
module prefix, which Gymnasium imports before it looks the id up. Gymnasium 1.x reads no
``gymnasium.envs`` entry point (its plugin loader went in 1.0), so the prefix is how a tool that
takes an env id as text reaches hear_gym's envs (docs/integrations.md, "Gymnasium")."""

from __future__ import annotations

import json
import subprocess
import sys

from hear_gym.core.registry import env_ids

FRESH_INTERPRETER = """
import json, sys
import gymnasium as gym
import numpy as np

env_id = sys.argv[1]
assert "hear_gym" not in sys.modules
env = gym.make("hear_gym:" + env_id)
observation, _ = env.reset(seed=5)
masks = {"make": np.asarray(observation["action_mask"]).tolist()}
_, reward, *_ = env.step(int(np.flatnonzero(observation["action_mask"])[0]))
for mode in ("sync", "async"):
    vector = gym.make_vec("hear_gym:" + env_id, num_envs=2, vectorization_mode=mode)
    batch, _ = vector.reset(seed=5)  # env k plays seed 5 + k
    masks[mode] = np.asarray(batch["action_mask"][0]).tolist()
    vector.step(np.array([int(np.flatnonzero(m)[0]) for m in batch["action_mask"]]))
    vector.close()
print(json.dumps({"spec": env.spec.id, "reward": float(reward), "masks": masks}))
"""


def _fresh(env_id: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", FRESH_INTERPRETER, env_id], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_id_is_made_and_vectorized_in_a_fresh_interpreter():
    for env_id in env_ids():
        made = _fresh(env_id)
        assert made["spec"] == env_id
        assert made["masks"]["sync"] == made["masks"]["async"] == made["masks"]["make"], env_id


def test_the_plain_id_needs_hear_gym_imported_first():
    """What the prefix is for: without it (and without ``import hear_gym``) Gymnasium does not
    know the namespace. If a Gymnasium release brings entry-point discovery back, this fails and
    the docs should say the plain id works."""
    script = "import gymnasium as gym; gym.make('hear_gym/Onset-v0')"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "hear_gym" in done.stderr.splitlines()[-1]
