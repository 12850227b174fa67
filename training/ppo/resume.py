"""Resuming an interrupted sb3 PPO run exactly where its last resume point left it.

At the first rollout start after each periodic checkpoint, ``save_resume_state`` writes
``resume/step_N/`` (tensors in safetensors, the rest in JSON; nothing pickled): the policy and
Adam's state, ``VecNormalize``'s running statistics, SB3's counters, the last observation and
episode starts, the curve's next evaluation step, the torch (CPU and every CUDA device), NumPy and
Python generators, and
each env's episode so far (``EpisodeReplay``). A rollout start is the one point where SB3 holds no
other state: the rollout buffer is empty and the last update is done. ``restore_resume_state``
puts all of it back into a freshly built model, replaying each env's episode and checking that it
reaches the saved observation; training then continues as if it had never stopped.

Not restored, since nothing trained depends on them: SB3's episode-info buffers (its
``ep_rew_mean`` log; this trainer's log is the curve), ``VecNormalize``'s return statistics
(rewards are not normalized), wall-clock times.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from hear_gym.core.run_folder import write_json_atomic

RESUME_DIR = "resume"
TENSORS_FILE = "state.safetensors"
STATE_FILE = "state.json"
STEP_PREFIX = "step_"
CUDA_RNG_PREFIX = "cuda_rng."


def _tensor(array) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(array)).clone()


def _observation_tensors(prefix: str, observation) -> dict[str, torch.Tensor]:
    if isinstance(observation, dict):
        return {f"{prefix}.{key}": _tensor(value) for key, value in observation.items()}
    return {prefix: _tensor(observation)}


def _observation(tensors: dict[str, torch.Tensor], prefix: str):
    if prefix in tensors:
        return tensors[prefix].numpy()
    return {key[len(prefix) + 1 :]: t.numpy() for key, t in tensors.items() if key.startswith(prefix + ".")}


def save_resume_state(model, next_eval: int | None, out: Path) -> Path:
    """``resume/step_N`` for ``model`` at a rollout start (N: its ``num_timesteps``), written
    into a temporary folder and renamed, so a folder of that name is always whole; older ones go."""
    step = int(model.num_timesteps)
    root = out / RESUME_DIR
    root.mkdir(exist_ok=True)
    target = root / f"{STEP_PREFIX}{step}"
    if target.is_dir():
        return target
    envs, normalize = model.get_env(), model.get_vec_normalize_env()
    tensors = {f"policy.{k}": v.detach().clone().contiguous() for k, v in model.policy.state_dict().items()}
    optimizer = model.policy.optimizer.state_dict()
    for index, values in optimizer["state"].items():
        tensors |= {f"optimizer.{index}.{name}": v.detach().clone() for name, v in values.items()}
    tensors["torch_rng"] = torch.get_rng_state()
    tensors |= _cuda_rng_tensors()
    tensors |= _observation_tensors("last_obs", model._last_obs)
    tensors["episode_starts"] = _tensor(model._last_episode_starts)
    normalization = None
    if normalize is not None:
        tensors |= _observation_tensors("original_obs", normalize.get_original_obs())
        for key, rms in normalize.obs_rms.items():
            tensors[f"obs_rms.{key}.mean"], tensors[f"obs_rms.{key}.var"] = (
                _tensor(rms.mean),
                _tensor(rms.var),
            )
        counts = {key: float(rms.count) for key, rms in normalize.obs_rms.items()}
        normalization = {"training": bool(normalize.training), "counts": counts}
    numpy_state = np.random.get_state()
    python_state = random.getstate()
    state = {
        "num_timesteps": step,
        "n_updates": int(model._n_updates),
        "progress_remaining": float(model._current_progress_remaining),
        "next_eval": next_eval,
        "optimizer_param_groups": optimizer["param_groups"],
        "optimizer_state_keys": {str(i): sorted(v) for i, v in optimizer["state"].items()},
        "normalization": normalization,
        "numpy_rng": [numpy_state[0], numpy_state[1].tolist(), *map(_plain, numpy_state[2:])],
        "python_rng": [python_state[0], list(python_state[1]), python_state[2]],
        "episodes": envs.env_method("episode_so_far"),
    }
    partial = Path(tempfile.mkdtemp(dir=root, prefix=f".{target.name}."))
    try:
        save_file(tensors, str(partial / TENSORS_FILE))
        write_json_atomic(partial / STATE_FILE, state)
        os.rename(partial, target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    for older in root.glob(f"{STEP_PREFIX}*"):
        if older != target:
            shutil.rmtree(older)
    return target


def _cuda_rng_tensors() -> dict[str, torch.Tensor]:
    """Each CUDA device's generator (sampling on a GPU draws from it, not from the CPU's)."""
    if not torch.cuda.is_available():
        return {}
    return {f"{CUDA_RNG_PREFIX}{i}": state for i, state in enumerate(torch.cuda.get_rng_state_all())}


def _restore_cuda_rng(tensors: dict[str, torch.Tensor], folder: Path) -> None:
    saved = [tensors[k] for k in sorted(tensors, key=_device_index) if k.startswith(CUDA_RNG_PREFIX)]
    present = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if saved and len(saved) == present:
        torch.cuda.set_rng_state_all(saved)
    elif saved or present:
        warnings.warn(
            f"{folder}: saved with {len(saved)} CUDA device(s), resumed with {present}: training goes on "
            "but will not match an uninterrupted run draw for draw",
            stacklevel=3,
        )


def _device_index(key: str) -> int:
    return int(key[len(CUDA_RNG_PREFIX) :]) if key.startswith(CUDA_RNG_PREFIX) else -1


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


class DamagedResumePoint(ValueError):
    """A resume point that cannot be read back, in one line naming the file (the CLI prints it)."""

    def __init__(self, path: Path, cause: BaseException):
        reason = " ".join(str(cause).split())[:200] or type(cause).__name__
        super().__init__(
            f"{path}: damaged resume point ({reason}); pass --discard-resume to start this run over "
            "in the same folder, or train into a new folder"
        )


def discard_resume_points(out: Path) -> None:
    """Remove a run's resume points, so the run starts over (``train(..., discard_resume=True)``)."""
    shutil.rmtree(out / RESUME_DIR, ignore_errors=True)


def latest_resume_state(out: Path) -> Path | None:
    """The newest whole ``resume/step_N`` folder of a run, if any."""
    folders = [p for p in (out / RESUME_DIR).glob(f"{STEP_PREFIX}*") if (p / STATE_FILE).is_file()]
    return max(folders, key=lambda p: int(p.name[len(STEP_PREFIX) :]), default=None)


def resume_step(folder: Path | None) -> int:
    return 0 if folder is None else int(folder.name[len(STEP_PREFIX) :])


def restore_resume_state(model, folder: Path) -> dict[str, Any]:
    """Put the state saved at ``folder`` back into ``model`` (built with the same settings, its
    envs not reset yet); the saved JSON state (for the curve's ``next_eval``)."""
    try:
        state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DamagedResumePoint(folder / STATE_FILE, exc) from None
    try:
        tensors = load_file(str(folder / TENSORS_FILE))
    except (OSError, ValueError, SafetensorError) as exc:
        raise DamagedResumePoint(folder / TENSORS_FILE, exc) from None
    try:
        return _restore(model, folder, state, tensors)
    except (KeyError, TypeError, RuntimeError) as exc:  # whole files that do not fit together
        raise DamagedResumePoint(folder, exc) from None


def _restore(model, folder: Path, state: dict[str, Any], tensors: dict[str, torch.Tensor]) -> dict[str, Any]:
    policy = {k[len("policy.") :]: v for k, v in tensors.items() if k.startswith("policy.")}
    model.policy.load_state_dict(policy)
    optimizer_state = {
        int(index): {name: tensors[f"optimizer.{index}.{name}"] for name in names}
        for index, names in state["optimizer_state_keys"].items()
    }
    model.policy.optimizer.load_state_dict(
        {"state": optimizer_state, "param_groups": state["optimizer_param_groups"]}
    )
    envs, normalize = model.get_env(), model.get_vec_normalize_env()
    if normalize is not None:
        for key, rms in normalize.obs_rms.items():
            rms.mean = tensors[f"obs_rms.{key}.mean"].numpy().copy()
            rms.var = tensors[f"obs_rms.{key}.var"].numpy().copy()
            rms.count = state["normalization"]["counts"][key]
        normalize.training = state["normalization"]["training"]
    original = _observation(tensors, "original_obs" if normalize is not None else "last_obs")
    for index, episode in enumerate(state["episodes"]):
        replayed = envs.env_method("replay", episode, indices=[index])[0]
        if not _same_observation(replayed, original, index):
            raise ValueError(
                f"{folder}: env {index} did not replay its episode to the saved observation "
                "(the env changed since the run began?); pass --discard-resume to start this run "
                "over, or train into a new folder"
            )
    if normalize is not None:
        normalize.old_obs = original
    model._last_obs = _observation(tensors, "last_obs")
    model._last_episode_starts = tensors["episode_starts"].numpy().copy()
    model.num_timesteps = state["num_timesteps"]
    model._n_updates = state["n_updates"]
    model._current_progress_remaining = state["progress_remaining"]
    torch.set_rng_state(tensors["torch_rng"])
    _restore_cuda_rng(tensors, folder)
    name, keys, *rest = state["numpy_rng"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), *rest))
    version, internal, gauss = state["python_rng"]
    random.setstate((version, tuple(internal), gauss))
    return state


def _same_observation(replayed, saved, index: int) -> bool:
    if isinstance(saved, dict):
        return all(np.array_equal(np.asarray(replayed[key]), saved[key][index]) for key in saved)
    return np.array_equal(np.asarray(replayed), saved[index])
