"""The PNG of a PPO run's learning curve (matplotlib, headless), one panel per metric (return and
Hear2Act's 1st% by default) against training steps: the training episodes' mean per rollout, the
held-out evaluations as marked points with their 95% CIs (the split the run evaluated on, e.g.
dev), the checkpoint ``--keep-best`` kept ringed, and, from an evaluation run beside it (``make
run``'s test table), every non-PPO cell as a horizontal line with that run's split in its label.

    python -m training.ppo.curve_plot RUN_FOLDER [--eval EVAL_FOLDER] [--out PNG]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hear_gym.core.registry import family
from training.curve_rows import read_rows
from training.ppo.curve import CURVE_FILE

DEFAULT_METRICS = ("return", "1st%")
PERCENT = 100.0  # train rows give shares in percent, evaluations as fractions


def _scale(metric: str) -> float:
    return PERCENT if metric.endswith("%") else 1.0


def _baselines(eval_dir: Path | None) -> tuple[str, dict[str, dict[str, Any]]]:
    """(the evaluation run's split, {cell: its metrics}) for every cell that is not a PPO policy."""
    if eval_dir is None:
        return "", {}
    metadata = json.loads((eval_dir / "metadata.json").read_text(encoding="utf-8"))
    cells = {
        name.split("/")[0]: cell["metrics"]
        for name, cell in metadata["cells"].items()
        if not cell["agent"].startswith("ppo")
    }
    return _split_of(metadata), cells


def _split_of(metadata: dict[str, Any]) -> str:
    """The split whose episodes the evaluation run played (``held-out`` for any other set)."""
    env_family = family(metadata["env_id"])
    played = set(metadata["config"]["item_ids"])
    return next((s for s in env_family.splits if set(env_family.item_ids(s)) == played), "held-out")


def _point(estimate: Any) -> float | None:
    if isinstance(estimate, dict):
        return estimate.get("point")
    return estimate


def plot_curve(
    run: Path, path: Path, eval_dir: Path | None = None, metrics: tuple[str, ...] = DEFAULT_METRICS
) -> Path:
    """Write the figure of the run folder ``run`` to ``path``; returns ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_rows(run / CURVE_FILE)
    if not rows:
        raise ValueError(f"{run / CURVE_FILE}: no curve to plot")
    train = [r for r in rows if r["kind"] == "train"]
    evaluated = [r for r in rows if r["kind"] == "eval"]
    eval_split = json.loads((run / "settings.json").read_text(encoding="utf-8")).get("eval_split", "held-out")
    kept = _kept_step(run)
    split, baselines = _baselines(eval_dir)
    fig, axes = plt.subplots(1, len(metrics), figsize=(6.5 * len(metrics), 4.2), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        scale = _scale(metric)
        steps = [r["step"] for r in train if r.get(metric) is not None]
        ax.plot(
            steps,
            [r[metric] for r in train if r.get(metric) is not None],
            color="0.6",
            lw=1,
            label="training episodes (per rollout)",
        )
        marked = [r for r in evaluated if metric in r["metrics"]]
        points = [scale * r["metrics"][metric]["point"] for r in marked]
        errors = [
            [scale * (r["metrics"][metric]["point"] - r["metrics"][metric]["low"]) for r in marked],
            [scale * (r["metrics"][metric]["high"] - r["metrics"][metric]["point"]) for r in marked],
        ]
        ax.errorbar(
            [r["step"] for r in marked],
            points,
            yerr=errors,
            fmt="o-",
            color="C0",
            ms=4,
            capsize=2,
            label=f"evaluations ({eval_split}, 95% CI)",
        )
        for r in marked:
            if r["step"] == kept:
                ax.plot(
                    [r["step"]],
                    [scale * r["metrics"][metric]["point"]],
                    "o",
                    ms=12,
                    mfc="none",
                    mec="C3",
                    label="kept checkpoint (best)",
                )
        for i, (name, cell_metrics) in enumerate(baselines.items()):
            value = _point(cell_metrics.get(metric))
            if value is not None:
                ax.axhline(scale * value, ls="--", lw=1, color=f"C{(i + 1) % 10}", label=f"{name} ({split})")
        ax.set_xlabel("training steps")
        ax.set_ylabel(metric)
        ax.set_title(f"{metric} against steps")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _kept_step(run: Path) -> int | None:
    """The step of ``checkpoints/best``, if the run kept one."""
    config = run / "checkpoints" / "best" / "policy.json"
    if not config.exists():
        return None
    return json.loads(config.read_text(encoding="utf-8")).get("step")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the PPO run folder (holds curve.jsonl)")
    parser.add_argument(
        "--eval", type=Path, default=None, help="an evaluation run whose other cells are lines"
    )
    parser.add_argument("--out", type=Path, default=None, help="the PNG (default: RUN/../curve.png)")
    parser.add_argument("--metric", action="append", default=None, help="a metric to plot (repeatable)")
    args = parser.parse_args()
    out = args.out or args.run.parent / "curve.png"
    print(f"learning curve: {plot_curve(args.run, out, args.eval, tuple(args.metric or DEFAULT_METRICS))}")


if __name__ == "__main__":
    main()
