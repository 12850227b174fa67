"""PPO on any registered env family, read top to bottom.

1. ``PPOSettings`` (``training.ppo.settings``): the env (id, access condition, ``gym.make`` options), PPO's hyperparameters,
   the seed, how often to evaluate, where to write, and the backend that trains: ``sb3`` (this
   file, one machine) or ``rllib`` (``training.ppo.rllib``, Ray RLlib, one machine or a cluster).
2. ``make_vec_env`` (``training.ppo.envs``): ``n_envs`` copies of the env's feature observation
   on its training split, in one process (``DummyVecEnv``) or one process each
   (``SubprocVecEnv``). Each env keeps its finished episode record under ``info[RECORD_KEY]``;
   SB3's ``Monitor`` then writes its own ``info["episode"]`` (return and length, for SB3's
   ``ep_rew_mean``).
3. ``TrainingCurve`` (``training.ppo.curve``), which both backends write through: after every
   rollout, the mean of the family's ``episode_scalars`` over the training episodes that
   finished in it; every ``eval_every`` steps a checkpoint (``agents.ppo``: safetensors + JSON)
   played on held-out episodes through the project's runner, so its metrics carry the same CIs
   as every other agent's. Both go to ``curve.jsonl`` and to W&B (offline unless
   ``WANDB_API_KEY`` is set; never asks to log in).
4. The sb3 backend: ``MaskablePPO`` (sb3-contrib) with the ``policy`` network (``mlp``:
   ``MultiInputPolicy``; ``per_option``: ``agents.hear2act.option_policy``); it reads the env's
   ``action_masks()``, so invalid actions are never sampled; with ``imitate``, the policy first
   clones a registered agent's play (``training.ppo.imitation``) and the clone is evaluated as
   ``checkpoints/step_0``. ``SB3Log`` feeds the curve from
   SB3's callback hooks. With ``normalize_observation`` (the default), SB3's ``VecNormalize``
   standardizes the measured leaves (``measured_leaves``: prosody in semitones and dB, VoiceGate's
   change vector) by their running mean and variance (the rllib backend: by fixed statistics,
   ``measured_statistics``); each checkpoint carries the statistics it was trained with, so the
   evaluator standardizes exactly as training did.
5. ``BACKENDS``: each name's loader, so Ray is imported only when ``rllib`` trains.
6. ``train``: the whole job, holding the run folder's lock (``RunFolderBusy`` for a second
   writer). ``training.ppo.run_folder`` says what the folder holds: a finished run of these
   settings is reused, an interrupted one resumed (sb3: from the last ``resume/step_N``, exactly,
   ``training.ppo.resume``), another run refused.

The same settings and seed give the same curve (SB3 seeds torch, NumPy and the envs).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger

from agents.device import resolve_device
from agents.ppo import load_policy, ppo_policies, save_policy
from hear_gym.core.run_folder import run_folder_lock
from hear_gym.eval.provenance import provenance
from hear_gym.eval.wandb_log import start_run
from training.ppo.curve import TrainingCurve, best_evaluated, checkpoint_meta, episode_scalars
from training.ppo.envs import (
    RECORD_KEY,
    make_vec_env,
    normalization_stats,
)
from training.ppo.imitation import imitate
from training.ppo.resume import (
    discard_resume_points,
    latest_resume_state,
    restore_resume_state,
    save_resume_state,
)
from training.ppo.run_folder import prior_run, start_or_resume
from training.ppo.settings import BACKEND_NAMES, PPOSettings

BEST_CHECKPOINT = "best"  # checkpoints/best (keep_best)


# -- 4. the sb3 backend (2. is training.ppo.envs, 3. training.ppo.curve) ------------------
class SB3Log(BaseCallback):
    """Feeds the curve from SB3's hooks: finished episodes and due evaluations after every env
    step, the ``train`` row at the end of every rollout."""

    def __init__(self, curve: TrainingCurve, env_id: str) -> None:
        super().__init__()
        self.curve, self.scalars = curve, episode_scalars(env_id)
        self.saved_next_eval = curve.next_eval  # moves on at each periodic checkpoint

    def _on_rollout_start(self) -> None:
        if self.curve.next_eval != self.saved_next_eval:  # a checkpoint since the last save
            save_resume_state(self.model, self.curve.next_eval, self.curve.settings.out)
            self.saved_next_eval = self.curve.next_eval

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if RECORD_KEY in info:
                self.curve.add_episode(self.scalars(info[RECORD_KEY]))
        self.curve.evaluate_if_due(self.num_timesteps)
        return True

    def _on_rollout_end(self) -> None:
        self.curve.end_rollout(self.num_timesteps)


def save_checkpoint(model: MaskablePPO, settings: PPOSettings, folder: Path, step: int) -> Path:
    packages = ("torch", "stable_baselines3", "sb3_contrib")
    meta = checkpoint_meta(
        settings, step, "MaskablePPO", packages, normalization_stats(model.get_vec_normalize_env())
    )
    return save_policy(model.policy.state_dict(), model.observation_space, model.action_space.n, folder, meta)


def start_from(model: MaskablePPO, folder: Path, policy_name: str) -> None:
    """``model``'s policy takes the weights of the checkpoint at ``folder`` (checked against the
    settings by ``PPOSettings``; a policy that ``extends`` the checkpoint's keeps its extra layers
    as initialized); its ``VecNormalize``, if any, takes the checkpoint's statistics and stops
    updating them."""
    policy, config = load_policy(folder)
    own = ppo_policies(config["env_id"])[policy_name]
    extra = own.extra_layers if config.get("policy") != policy_name else ()
    missing, unexpected = model.policy.load_state_dict(policy.state_dict(), strict=not extra)
    if unexpected or any(not key.startswith(extra) for key in missing):
        raise ValueError(f"init_from {folder}: layers do not match ({missing + unexpected})")
    envs = model.get_vec_normalize_env()
    if envs is not None:
        for key, stats in config["observation_normalization"]["leaves"].items():
            envs.obs_rms[key].mean = np.asarray(stats["mean"], dtype=np.float64)
            envs.obs_rms[key].var = np.asarray(stats["var"], dtype=np.float64)
        envs.training = False


def silent_logger() -> Logger:
    """SB3's logger with no outputs: its default makes an empty folder in the temp dir per run,
    and the curve (``TrainingCurve``) is this trainer's log."""
    return Logger(folder=None, output_formats=[])


def learn_sb3(settings: PPOSettings, wandb_run) -> dict[str, Any]:
    """Train with MaskablePPO, writing the curve; the final checkpoint's metrics."""
    envs = make_vec_env(settings)
    model = MaskablePPO(
        ppo_policies(settings.env_id)[settings.policy].load(),
        envs,
        n_steps=settings.n_steps,
        batch_size=settings.batch_size,
        n_epochs=settings.n_epochs,
        learning_rate=settings.learning_rate,
        gamma=settings.gamma,
        ent_coef=settings.ent_coef,
        policy_kwargs={"net_arch": list(settings.net_arch)},
        seed=settings.seed,
        device=resolve_device(settings.device),
        verbose=0,
    )
    model.set_logger(silent_logger())
    if settings.init_from is not None:
        start_from(model, Path(settings.init_from), settings.policy)
    curve = TrainingCurve(settings, functools.partial(save_checkpoint, model, settings), wandb_run)
    resume = latest_resume_state(settings.out)
    if settings.imitate is not None and resume is None:  # a resumed run has its weights
        for row in imitate(model.policy, settings):
            curve.write({"kind": "imitation", **row}, 0)
        if settings.eval_every:  # the cloned policy is a candidate for checkpoints/best too
            curve.evaluate("step_0", 0)
    if resume is not None:
        curve.next_eval = restore_resume_state(model, resume)["next_eval"]
    try:
        model.learn(
            settings.total_steps - model.num_timesteps,  # SB3 adds the steps done when resuming
            callback=SB3Log(curve, settings.env_id),
            progress_bar=settings.progress,
            reset_num_timesteps=resume is None,
        )
        return curve.evaluate("final", model.num_timesteps)
    finally:
        envs.close()


# -- 5. the backends, loaded only when chosen ---------------------------------------------------
Backend = Callable[[PPOSettings, Any], dict[str, Any]]  # (settings, W&B run or None) -> final metrics


def _load_sb3() -> Backend:
    return learn_sb3


def _load_rllib() -> Backend:
    try:
        import ray.rllib  # noqa: F401  (Ray alone, from hear-gym[ray], lacks RLlib's own packages)
    except ImportError as exc:
        raise ValueError(f"backend 'rllib' needs Ray RLlib ({exc}): pip install 'hear-gym[rllib]'") from None
    from training.ppo.rllib import learn_rllib

    return learn_rllib


BACKENDS: dict[str, Callable[[], Backend]] = dict(zip(BACKEND_NAMES, (_load_sb3, _load_rllib), strict=True))


def _wandb_run(settings: PPOSettings):
    if settings.wandb_project is None:
        return None
    config = {"settings": settings.to_json(), "provenance": provenance(settings.env_id)}
    return start_run(config, settings.out, settings.wandb_project)


def train_ppo(discard_resume: bool = False, **settings: Any) -> dict[str, Any]:
    """The ``hear_gym.components`` entry point ``train_ppo``:
    ``train(PPOSettings(**settings), discard_resume)``."""
    return train(PPOSettings(**settings), discard_resume)


# -- the whole job -----------------------------------------------------------------------------
@contextlib.contextmanager
def one_compute_thread() -> Iterator[None]:
    """Torch and BLAS compute on one thread inside, as they did before outside. The policies are
    small, and the audio measurements call BLAS between torch calls: with a thread pool each per
    core, two A+T trainings side by side on 2 cores ran 5.6x slower than on one thread each
    (alone: no difference; ``benchmarks/speed/ppo.py``)."""
    import threadpoolctl
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpoolctl.threadpool_limits(1):
            yield
    finally:
        torch.set_num_threads(before)


def train(settings: PPOSettings, discard_resume: bool = False) -> dict[str, Any]:
    """Train with ``settings.backend``, evaluating along the way and at the end; returns the final
    checkpoint and metrics. The run holds the folder's lock throughout (``RunFolderBusy`` for a
    second writer). A folder that already holds this finished run (same settings) is returned as
    it is; this run interrupted resumes from its last resume point (sb3), or, with
    ``discard_resume`` (a damaged resume point), starts over there; any other training run there
    is never overwritten."""
    prior = prior_run(settings)  # read-only: refusing the folder or reusing a run needs no lock
    if prior is not None and "finished" in prior:
        return prior["finished"]
    learn = BACKENDS[settings.backend]()  # a missing backend fails before the folder is written
    with run_folder_lock(settings.out):
        prior = prior_run(settings)  # again: another writer may have finished it meanwhile
        if prior is not None and "finished" in prior:
            return prior["finished"]
        if discard_resume:
            discard_resume_points(settings.out)  # the curve is then kept up to step 0: none of it
        start_or_resume(settings, resuming=prior is not None)
        run = _wandb_run(settings)
        try:
            with one_compute_thread():
                metrics = learn(settings, run)
        finally:
            if run is not None:
                run.finish()
        if settings.keep_best:
            copy_best(settings.out)
    return {
        "checkpoint": str(settings.out / "checkpoints" / "final"),
        "evaluation": str(settings.out / "evals" / "final"),
        "metrics": metrics,
        "reused": False,
    }


def copy_best(out: Path) -> Path:
    """``checkpoints/best``: a copy of the evaluated checkpoint with the best held-out return
    (``curve.best_evaluated``), written beside its name and renamed, so it is whole or absent."""
    chosen, _ = best_evaluated(out)
    best = out / "checkpoints" / BEST_CHECKPOINT
    partial = best.with_name(BEST_CHECKPOINT + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(out / chosen, partial)
    shutil.rmtree(best, ignore_errors=True)
    os.replace(partial, best)
    return best
