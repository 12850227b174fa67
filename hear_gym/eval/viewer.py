"""``hear-gym view``: one self-contained HTML page for evaluation run folders.

The page needs no network: its CSS and script are inline, its data is one JSON block, and every
clip is a ``data:`` URI (a 16-bit WAV). It holds a table of cells (episodes, mean return with a
95% episode-level bootstrap CI over every episode of the run), filters by cell, env and outcome
(the sign of the return), and, for ``per_cell`` episodes of each cell (the first by episode id and
rollout), every turn as the agent met it, replayed from the record (``episode_replay``): the
text it observed, the clip it heard, its reply, the reward and the running return. Strings from
scenarios or agents reach the page as JSON data and are put in the page as text, never as markup.
"""

from __future__ import annotations

import base64
import io
import json
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from hear_gym.core.registry import family
from hear_gym.core.spaces import AUDIO_RATE
from hear_gym.eval.episode_replay import replay_episode
from hear_gym.eval.results import CONFIG_FILE, RESULTS_FILE, read_results
from hear_gym.stats.bootstrap import RatioSums, ratio_ci

TEMPLATE = "viewer_page.html"
DATA_MARK = "/*HEAR_GYM_DATA*/null"


def wav_data_uri(clip: np.ndarray) -> str | None:
    if clip.size == 0:
        return None
    buffer = io.BytesIO()
    sf.write(buffer, clip, AUDIO_RATE, format="WAV", subtype="PCM_16")
    return "data:audio/wav;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def outcome(episode_return: float) -> str:
    return "return > 0" if episode_return > 0 else "return < 0" if episode_return < 0 else "return = 0"


def _return(env_id: str, record: dict[str, Any]) -> float:
    scalars = family(env_id).episode_scalars
    if scalars is None:
        raise ValueError(
            f"{env_id} declares no episode_scalars: its records carry no return the viewer can read"
        )
    return float(scalars(record)["return"])


def cell_rows(env_id: str, run: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per cell: episodes and the mean return with its 95% bootstrap CI (episode id the unit)."""
    by_cell: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        by_cell[record["cell"]][record["item_id"]].append(_return(env_id, record))
    rows = []
    for cell, episodes in by_cell.items():
        sums = RatioSums(
            np.array([sum(v) for v in episodes.values()]),
            np.array([len(v) for v in episodes.values()], float),
        )
        estimate = ratio_ci(sums)
        n = int(sums.denominator.sum())
        rows.append({"env": env_id, "run": run, "cell": cell, "episodes": n, "return": estimate.as_dict()})
    return rows


def _episode(env_id: str, run: str, record: dict, env_kwargs: dict, replayable: bool) -> dict[str, Any]:
    env_family = family(env_id)
    episode_return = _return(env_id, record)
    cell_options = {key: record[key] for key in env_family.cell_options}
    turns, note = [], "not replayed: the run used plug-in objects the page cannot rebuild"
    if replayable:
        replay = replay_episode(record, env_id, env_kwargs, cell_options)
        note = replay.note
        for turn in replay.turns:
            turns.append(
                {
                    "texts": turn.texts,
                    "audio": wav_data_uri(turn.clip),
                    "duration": turn.clip.size / AUDIO_RATE,
                    "reply": turn.reply,
                    "reward": turn.reward,
                    "running_return": turn.running_return,
                }
            )
    return {
        "env": env_id,
        "run": run,
        "cell": record["cell"],
        "item_id": record["item_id"],
        "rollout": record["rollout"],
        "seed": record["seed"],
        "return": episode_return,
        "outcome": outcome(episode_return),
        "note": note,
        "turns": turns,
    }


def run_data(run_dir: Path, per_cell: int) -> tuple[list[dict], list[dict]]:
    """The cell rows and the shown episodes of one run folder."""
    config_path = run_dir / CONFIG_FILE
    if not config_path.is_file():
        raise FileNotFoundError(f"{run_dir} is not an evaluation run folder (no {CONFIG_FILE})")
    config = json.loads(config_path.read_text())
    env_id = config["env_id"]
    records = read_results(run_dir / RESULTS_FILE, family(env_id).renamed_record_fields)
    if not records:
        raise ValueError(f"{run_dir}: no episodes in {RESULTS_FILE}")
    run = run_dir.name
    env_kwargs = {key: value for key, value in config["env_kwargs"]}
    replayable = not config["plugins"]
    by_cell: dict[str, list[dict]] = defaultdict(list)
    for record in sorted(records, key=lambda r: (r["cell"], r["item_id"], r["rollout"])):
        by_cell[record["cell"]].append(record)
    episodes = [
        _episode(env_id, run, record, env_kwargs, replayable)
        for cell_records in by_cell.values()
        for record in cell_records[:per_cell]
    ]
    return cell_rows(env_id, run, records), episodes


def page(data: dict[str, Any]) -> str:
    """The page with ``data`` in its JSON block (``<``, ``>`` and ``&`` escaped, so no string in
    it can close the script element)."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    template = resources.files("hear_gym.eval").joinpath(TEMPLATE).read_text(encoding="utf-8")
    if template.count(DATA_MARK) != 1:
        raise RuntimeError(f"{TEMPLATE} must hold the data mark once")
    return template.replace(DATA_MARK, text)


def write_view(run_dirs: list[Path], out: Path, per_cell: int = 5) -> Path:
    """Write the page for ``run_dirs`` to ``out``; returns ``out``."""
    if per_cell < 0:
        raise ValueError("per_cell must be >= 0")
    cells, episodes = [], []
    for run_dir in run_dirs:
        run_cells, run_episodes = run_data(Path(run_dir), per_cell)
        cells += run_cells
        episodes += run_episodes
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page({"cells": cells, "episodes": episodes}), encoding="utf-8")
    return out


__all__ = ["page", "run_data", "write_view"]
