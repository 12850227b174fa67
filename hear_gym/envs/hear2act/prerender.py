"""Pre-render the audio of standard rollouts into the on-disk render cache.

Every user turn depends on the agent's actions, so "the audio of a split" means the audio of the
episodes an evaluation will play: the same cells, scenarios, rollouts and episode seeds as
``hear-gym eval``. Playing them once with rendering fills the cache; the evaluation (or any
later run with the same settings and ``audio_cache_dir``) then finds every turn warm.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import gymnasium as gym
from rich.progress import Progress

from hear_gym.core.run_config import RunConfig
from hear_gym.envs.hear2act.audio import TurnAudio
from hear_gym.eval.runner import AgentFactory, episode_seed
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.plans import DEFAULT_PROSODY
from hear_gym.speech.renderers import make_renderer


def prerender(
    config: RunConfig,
    agents: Mapping[str, AgentFactory],
    cache_dir: Path,
    renderer: str = "espeak",
    prosody: str = DEFAULT_PROSODY,
    progress: bool = True,
) -> dict[str, int]:
    """Play every episode of ``config`` and render each user turn (delivery plan table
    ``prosody``) into ``cache_dir``."""
    cache = RenderCache(make_renderer(renderer), max_bytes=32 * 2**20, disk_dir=cache_dir)
    audio = TurnAudio(cache, prosody)
    total = len(config.cells) * len(config.episode_ids) * config.rollouts
    with Progress(disable=not progress) as bar:
        task = bar.add_task(f"rendering ({renderer}, prosody {prosody})", total=total)
        for cell in config.cells:
            env = gym.make(
                config.env_id,
                access=cell.access,
                scenario_ids=list(config.episode_ids),
                disable_env_checker=True,
                **dict(config.env_kwargs),
                **dict(cell.options),
            )
            agent = agents[cell.agent]()
            for scenario_id in config.episode_ids:
                for rollout in range(config.rollouts):
                    seed = episode_seed(config.seed, scenario_id, rollout)
                    obs, _ = env.reset(seed=seed, options={"scenario_id": scenario_id})
                    agent.reset(seed=seed)
                    audio.waveform(env, turn=0)
                    audio.waveform(env)
                    done = False
                    while not done:
                        obs, _, terminated, truncated, _ = env.step(agent.act(obs))
                        audio.waveform(env)
                        done = terminated or truncated
                    bar.advance(task)
            env.close()
    stats = cache.stats
    return {"rendered": stats.renders, "already_on_disk": stats.disk_hits, "memory_hits": stats.memory_hits}
