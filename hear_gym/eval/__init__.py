"""Evaluate agents in env loops: ``evaluate(out_dir, config, {name: factory})`` plays every cell
of a ``RunConfig`` and writes ``results.jsonl`` and ``metadata.json`` into ``out_dir``. A factory
is any zero-argument callable returning a new agent (an agent class, or ``lambda: MyAgent(model)``;
the runner builds one for every episode), so your own agent needs no entry point. ``hear-gym
eval`` is the same call from the command line."""

from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results

__all__ = ["Cell", "RunConfig", "evaluate", "read_results"]
