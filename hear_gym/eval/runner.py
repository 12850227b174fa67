"""The one evaluation runner, for every env family: cells (agent x access condition x the
family's per-cell options) x episodes x rollouts.

Every (cell, episode, rollout) uses the same seed in every cell, derived from the run seed, the
episode id and the rollout index, so conditions are paired down to the user's word draws. The
runner knows a family only through its ``EnvFamily`` (``hear_gym.core.family``): it builds envs
with ``gym.make``, plays ``reset(options=family.reset_options(id))`` to the end and writes the
env's ``info["episode"]`` plus the run's fields to ``results.jsonl`` as episodes finish. Running
the same config again on the same folder resumes: finished episodes are skipped, none is
duplicated.

Nothing carries from one episode to the next: episodes are played in an order shuffled by the
run seed (``episode_order``; a family's ids list a minimal pair's readings, or an item and its
control, side by side), and each episode gets a new agent from its cell's factory, so neither
the position of an episode nor what an agent saw before tells it the answer.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import gymnasium as gym
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from hear_gym.core.registry import family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.core.run_folder import write_json_atomic
from hear_gym.eval.folder import writing_into
from hear_gym.eval.pool import WorkerPool
from hear_gym.eval.results import CONFIG_FILE, RESULTS_FILE, ResultsWriter


def episode_seed(run_seed: int, item_id: str, rollout: int) -> int:
    digest = hashlib.blake2b(f"{run_seed}/{item_id}/{rollout}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little")


def episode_order(config: RunConfig) -> list[tuple[str, int]]:
    """Every (episode id, rollout) of ``config`` in the order the run plays them: sorted by a hash
    of the run seed, the episode id and the rollout, so the same seed gives the same order (a
    resumed run plays what is left in it) and a different seed another one."""
    units = [(e, k) for e in config.item_ids for k in range(config.rollouts)]

    def place(unit: tuple[str, int]) -> tuple[bytes, str, int]:
        item_id, rollout = unit
        key = hashlib.blake2b(f"{config.seed}/order/{item_id}/{rollout}".encode(), digest_size=8)
        return key.digest(), item_id, rollout

    return sorted(units, key=place)


def episode_key(cell: Cell, item_id: str, rollout: int) -> str:
    return f"{cell.name}|{item_id}|{rollout}"


AgentFactory = Callable[[], Any]


def run_episode(env: gym.Env, agent, reset_options: dict[str, Any], seed: int) -> dict[str, Any]:
    """Play one episode; returns the env's episode record (``info["episode"]``)."""
    observation, info = env.reset(seed=seed, options=reset_options)
    agent.reset(seed=seed)
    terminated = truncated = False
    while not (terminated or truncated):
        observation, _reward, terminated, truncated, info = env.step(agent.act(observation))
    return info["episode"]


def run_episodes_batched(
    envs: list[gym.Env], agent, jobs: list[tuple[dict[str, Any], int]]
) -> list[dict[str, Any]]:
    """Play one episode per env in lockstep: each turn, one ``agent.act_batch`` call over the
    episodes still running. The agent must be stateless (its reply depends on the observation
    only), so the episodes are the ones ``run_episode`` would play one by one."""
    observations, finished = [], [None] * len(jobs)
    for env, (options, seed) in zip(envs, jobs, strict=True):
        observations.append(env.reset(seed=seed, options=options)[0])
    agent.reset(seed=jobs[0][1])
    running = list(range(len(jobs)))
    while running:
        actions = agent.act_batch([observations[i] for i in running])
        still = []
        for i, action in zip(running, actions, strict=True):
            observations[i], _reward, terminated, truncated, info = envs[i].step(action)
            if terminated or truncated:
                finished[i] = info["episode"]
            else:
                still.append(i)
        running = still
    return finished


def _with_run_fields(
    record: dict[str, Any], cell: Cell, item_id: str, rollout: int, seed: int
) -> dict[str, Any]:
    return {
        "key": episode_key(cell, item_id, rollout),
        "cell": cell.name,
        "agent": cell.agent,
        "access": cell.access,
        **dict(cell.options),
        "item_id": item_id,
        "rollout": rollout,
        "seed": seed,
        **record,
    }


def _pending(config: RunConfig, done: set[str]) -> Iterator[tuple[Cell, str, int]]:
    """In ``episode_order``; an episode's runs in every cell come back to back (and go to one
    worker), so its rendered audio and features are reused from memory across conditions."""
    for item_id, rollout in episode_order(config):
        for cell in config.cells:
            if episode_key(cell, item_id, rollout) not in done:
                yield cell, item_id, rollout


def run_evaluation(
    out_dir: Path,
    config: RunConfig,
    agents: Mapping[str, AgentFactory],
    progress: bool = True,
    env_objects: Mapping[str, Any] | None = None,
    workers: int = 1,
    backend: str = "processes",
    batch_size: int = 1,
    pool: WorkerPool | None = None,
) -> Path:
    """Run (or resume) every episode of ``config`` into ``out_dir``; returns the results path.
    ``env_objects`` go to every ``gym.make`` beside ``config.env_kwargs`` (objects such as a
    ``state_inferrer``; describe them in ``config.plugins``).

    * ``workers > 1``: episodes run in ``workers`` parallel players, each with its own envs and
      agents (factories and ``env_objects`` must pickle). ``backend="processes"`` uses a pool of
      spawned processes; ``backend="ray"`` uses Ray actors (a local instance, or the cluster
      named by ``RAY_ADDRESS``; needs ``pip install ray``).
    * ``pool``: an open ``hear_gym.eval.pool.WorkerPool`` plays the episodes (its worker count replaces
      ``workers``), so the evaluations of a grid share one set of started workers.
    * ``batch_size > 1``: agents with ``act_batch`` (stateless chat agents) play that many
      episodes of a cell in lockstep, one batched call per turn, one agent per batch; other
      agents play one by one.

    Episodes are played in ``episode_order`` (shuffled by the run seed), each by a new agent from
    its cell's factory (``agents[name]()``, then ``configure``, then ``reset(seed)``): a factory
    must return a new agent from every call; one that returns the agent it returned before is
    refused. A factory may also define ``release()``: a player calls it once it will build no more
    of that factory's agents (after its last episode in one process; when a worker is done), so
    a model it holds leaves memory before another cell's loads. Every episode's seed is fixed by the config, so results are the same for any worker
    count, backend, batch size or order, only written in another order. The run holds the folder's writer lock
    (``hear_gym.eval.folder``): a second writer is refused with ``RunFolderBusy``."""
    missing = sorted({c.agent for c in config.cells} - set(agents))
    if missing:
        raise ValueError(f"unknown agents {missing}; available: {sorted(agents)}")
    if workers < 1 or batch_size < 1:
        raise ValueError("workers and batch_size must be >= 1")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {backend!r}")
    if backend == "ray":
        _require_ray()
        if pool is not None:
            raise ValueError("a WorkerPool is a set of processes; it cannot serve backend 'ray'")
    results = out_dir / RESULTS_FILE
    with writing_into(out_dir):  # one writer per folder; a refused run leaves nothing behind
        _check_config(out_dir, config)
        with ResultsWriter(results) as writer:
            todo = list(_pending(config, writer.keys))
            with _progress(progress) as bar:
                task = bar.add_task("episodes", total=len(todo))
                chunks = _chunks(todo, batch_size)
                for record in _play_all(
                    chunks, config, agents, dict(env_objects or {}), workers, backend, batch_size, pool
                ):
                    writer.write(record)
                    bar.advance(task)
    return results


class _Player:
    """Plays episodes of a config: each cell's envs built on first use and kept, a new agent from
    the cell's factory for every episode (or lockstep batch)."""

    def __init__(
        self, config: RunConfig, agents: Mapping[str, AgentFactory], env_objects: dict, batch_size: int = 1
    ) -> None:
        self.config, self.agents, self.env_objects, self.batch_size = config, agents, env_objects, batch_size
        self.family = family(config.env_id)
        self.envs: dict[Cell, list[gym.Env]] = {}
        self.formats: dict[Cell, tuple[str, str]] = {}
        self.last_agents: dict[Cell, Any] = {}  # held, so a factory that hands it out again is seen

    def _env_options(self, cell: Cell) -> dict[str, Any]:
        return {**dict(self.config.env_kwargs), **dict(cell.options)}

    def _agent(self, cell: Cell) -> Any:
        agent = _make_agent(self.agents[cell.agent], cell, self._env_options(cell))
        if agent is self.last_agents.get(cell):
            raise ValueError(
                f"{cell.name}: the factory of agent {cell.agent!r} returned an agent it returned before; "
                f"every episode is played by a new agent: return a new one from each call "
                f"(share heavy, stateless parts such as model weights between them)"
            )
        self.last_agents[cell] = agent
        return agent

    def _env(self, cell: Cell, agent, slot: int = 0) -> gym.Env:
        formats = (getattr(agent, "action_format", "discrete"), getattr(agent, "observation_format", "dict"))
        if self.formats.setdefault(cell, formats) != formats:
            raise ValueError(f"{cell.name}: agent {cell.agent!r} changed its action or observation format")
        envs = self.envs.setdefault(cell, [])
        while len(envs) <= slot:
            envs.append(
                gym.make(
                    self.config.env_id,
                    access=cell.access,
                    actions=formats[0],
                    observation=formats[1],
                    disable_env_checker=True,
                    **self.family.episode_kwargs(self.config.item_ids),
                    **self._env_options(cell),
                    **self.env_objects,
                )
            )
        return envs[slot]

    def _job(self, item_id: str, rollout: int) -> tuple[dict[str, Any], int]:
        return self.family.reset_options(item_id), episode_seed(self.config.seed, item_id, rollout)

    def play(self, item: tuple[Cell, str, int], agent=None) -> dict[str, Any]:
        cell, item_id, rollout = item
        agent = agent if agent is not None else self._agent(cell)
        options, seed = self._job(item_id, rollout)
        record = run_episode(self._env(cell, agent), agent, options, seed)
        return _with_run_fields(record, cell, item_id, rollout, seed)

    def play_chunk(self, chunk: list[tuple[Cell, str, int]]) -> list[dict[str, Any]]:
        cell = chunk[0][0]
        if self.batch_size > 1 and len(chunk) > 1 and all(c == cell for c, _, _ in chunk):
            agent = self._agent(cell)
            if hasattr(agent, "act_batch"):
                envs = [self._env(cell, agent, slot) for slot in range(len(chunk))]
                return self._lockstep(cell, agent, envs, chunk)
            return [self.play(chunk[0], agent), *(self.play(item) for item in chunk[1:])]
        return [self.play(item) for item in chunk]

    def _lockstep(self, cell: Cell, agent, envs: list[gym.Env], chunk) -> list[dict[str, Any]]:
        jobs = [self._job(item_id, rollout) for _, item_id, rollout in chunk]
        records = run_episodes_batched(envs, agent, jobs)
        return [
            _with_run_fields(r, cell, e, k, seed)
            for r, (_, e, k), (_, seed) in zip(records, chunk, jobs, strict=True)
        ]

    def release(self, agent: str) -> None:
        """Tell the agent's factory that this player needs no more of its agents: a factory with a
        ``release()`` (one holding a model) frees what it holds."""
        release = getattr(self.agents[agent], "release", None)
        if callable(release):
            release()

    def close(self) -> None:
        for envs in self.envs.values():
            for env in envs:
                env.close()
        for agent in self.agents:
            self.release(agent)


def _chunks(todo: list[tuple[Cell, str, int]], batch_size: int) -> list[list[tuple[Cell, str, int]]]:
    """Units of work for one player, in the order of ``todo``: an episode's rollout in every cell
    (its audio stays in one worker's memory), or, for batched play, up to ``batch_size`` episodes
    of one cell."""
    groups: dict[Any, list[tuple[Cell, str, int]]] = {}
    for item in todo:
        groups.setdefault(item[0] if batch_size > 1 else item[1:], []).append(item)
    if batch_size == 1:
        return list(groups.values())
    return [group[i : i + batch_size] for group in groups.values() for i in range(0, len(group), batch_size)]


def _play_processes(chunks, config, agents, env_objects, workers, batch_size) -> Iterator[dict[str, Any]]:
    with WorkerPool(workers) as pool:
        yield from _play_in_pool(pool, chunks, config, agents, env_objects, batch_size)


def _play_in_pool(
    pool: WorkerPool, chunks, config, agents, env_objects, batch_size
) -> Iterator[dict[str, Any]]:
    """Each worker builds its own ``_Player`` for this evaluation, as a fresh pool's would."""
    yield from pool.play(chunks, functools.partial(_Player, config, agents, env_objects, batch_size))


def _require_ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        raise ValueError("backend 'ray' needs Ray: pip install 'hear-gym[ray]'") from None


def _play_ray(chunks, config, agents, env_objects, workers, batch_size) -> Iterator[dict[str, Any]]:
    import ray
    from ray.util import ActorPool

    started = not ray.is_initialized()
    if started:  # a local instance, unless RAY_ADDRESS names a cluster
        address = os.environ.get("RAY_ADDRESS")
        ray.init(
            address=address,
            num_cpus=None if address else workers,
            include_dashboard=False,
            log_to_driver=False,
        )
    actor_class = ray.remote(num_cpus=1)(_Player)
    actors = [actor_class.remote(config, agents, env_objects, batch_size) for _ in range(workers)]
    try:
        pool = ActorPool(actors)
        for records in pool.map_unordered(lambda actor, chunk: actor.play_chunk.remote(chunk), chunks):
            yield from records
    finally:
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()


BACKENDS = {"processes": _play_processes, "ray": _play_ray}


def _play_all(
    chunks, config, agents, env_objects, workers, backend, batch_size, pool
) -> Iterator[dict[str, Any]]:
    if pool is not None:
        yield from _play_in_pool(pool, chunks, config, agents, env_objects, batch_size)
        return
    if workers == 1 or len(chunks) < 2:
        player = _Player(config, agents, env_objects, batch_size)
        finished = _last_chunks(chunks)
        try:
            for index, chunk in enumerate(chunks):
                yield from player.play_chunk(chunk)
                for agent in finished.get(index, ()):  # its model leaves memory before the next loads
                    player.release(agent)
        finally:
            player.close()
        return
    yield from BACKENDS[backend](chunks, config, agents, env_objects, workers, batch_size)


def _last_chunks(chunks: list[list[tuple[Cell, str, int]]]) -> dict[int, list[str]]:
    """chunk index -> the agents that play no chunk after it."""
    last = {cell.agent: index for index, chunk in enumerate(chunks) for cell, _, _ in chunk}
    finished: dict[int, list[str]] = {}
    for agent, index in last.items():
        finished.setdefault(index, []).append(agent)
    return finished


def _make_agent(factory: AgentFactory, cell: Cell, env_options: Mapping[str, Any]):
    """A new agent for one episode (or one lockstep batch). An agent reads what its
    ``required_access`` (one condition or several) provides; any condition also carries the
    transcript, so a transcript-only agent runs everywhere.

    An agent with a ``configure(env_options)`` method is told, once, as it is built, what its env
    was built with beyond the access condition: the run's env kwargs and the cell's options (JSON
    values; never the plug-in objects), the settings an observation does not carry (a turn cost, a
    reward). Agents without it are built as before."""
    agent = factory()
    needed = getattr(agent, "required_access", "T")
    accepted = (needed,) if isinstance(needed, str) else tuple(needed)
    if "T" not in accepted and cell.access not in accepted:
        raise ValueError(f"{cell.name}: agent {cell.agent!r} needs access {' or '.join(accepted)}")
    configure = getattr(agent, "configure", None)
    if callable(configure):
        configure(MappingProxyType(dict(env_options)))
    return agent


def _check_config(out_dir: Path, config: RunConfig) -> None:
    path = out_dir / CONFIG_FILE
    if path.exists():
        try:
            previous = RunConfig.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{path} is not a readable run configuration ({exc}); "
                f"use a new folder, or delete this one to start over"
            ) from None
        if previous != config:
            raise ValueError(
                f"{out_dir} holds a run with a different configuration; "
                f"use a new folder or the same options to resume"
            )
    else:
        write_json_atomic(path, config.to_json())


def _progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        disable=not enabled,
        transient=False,
    )


__all__ = [
    "BACKENDS",
    "Cell",
    "RunConfig",
    "episode_key",
    "episode_order",
    "episode_seed",
    "run_episode",
    "run_episodes_batched",
    "run_evaluation",
]
