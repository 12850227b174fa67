"""PNG figures of a finished run (matplotlib, headless).

* ``outcomes.png``: 1st%, OptSat% and SvcSat% per cell with 95% CIs, one panel per feedback
  realization (the paper's condition bars).
* ``action_shift.png``: for every cell, the change in its recommend / ask / clarify shares
  against the first cell of its feedback realization, in percentage points (Figure 3's view).

``ladder_plot`` draws Figure 4, 1st% along the label-fidelity ladder, from several runs:
``ladder_rungs`` reads each run's cells (a T cell is "no state"; a T+S cell is "correct", or
the state intervention the run was made with).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hear_gym.core.run_folder import write_figure_atomic

OUTCOMES = ("1st%", "OptSat%", "SvcSat%")
SHARES = ("recommend share", "ask share", "clarify share")
LADDER_RUNGS = ("no state", "all-resolved", "shuffled", "all-unresolved", "correct")
_RUNG_OF_INTERVENTION = {
    "all_resolved": "all-resolved",
    "shuffled": "shuffled",
    "all_unresolved": "all-unresolved",
}


def ladder_rungs(summaries: list[dict[str, Any]]) -> dict[str, dict[str, dict]]:
    """{feedback: {rung: 1st% estimate}} from run summaries (metadata.json contents); the first
    run that provides a rung for a feedback wins."""
    rungs: dict[str, dict[str, dict]] = {}
    for summary in summaries:
        options = dict(summary.get("config", {}).get("env_kwargs", []))
        for cell in summary["cells"].values():
            if cell["access"] == "T":
                rung = "no state"
            elif cell["access"] == "T+S":
                rung = _RUNG_OF_INTERVENTION.get(options.get("state_intervention"), "correct")
            else:
                continue
            rungs.setdefault(cell["feedback"], {}).setdefault(rung, cell["metrics"]["1st%"])
    return rungs


def ladder_plot(panels: dict[str, dict[str, dict[str, dict]]], path: Path) -> Path:
    """One panel per key (e.g. renderer) of {feedback: {rung: estimate dict}}; missing rungs
    are left empty."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 3.8), squeeze=False)
    for ax, (title, by_feedback) in zip(axes[0], panels.items(), strict=True):
        for i, (feedback, estimates) in enumerate(by_feedback.items()):
            xs = [x + 0.4 * i for x, rung in enumerate(LADDER_RUNGS) if rung in estimates]
            found = [estimates[rung] for rung in LADDER_RUNGS if rung in estimates]
            errors = [
                [100 * (e["point"] - e["low"]) for e in found],
                [100 * (e["high"] - e["point"]) for e in found],
            ]
            ax.bar(xs, [100 * e["point"] for e in found], 0.4, yerr=errors, capsize=3, label=feedback)
        ax.set_xticks([x + 0.2 for x in range(len(LADDER_RUNGS))])
        ax.set_xticklabels(LADDER_RUNGS, fontsize=8)
        ax.set_ylabel("1st% (95% CI)")
        ax.set_title(f"label-fidelity ladder {title}".strip())
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_figure_atomic(fig, path, dpi=120)
    plt.close(fig)
    return path


def write_plots(summary: dict[str, Any], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    cells = list(summary["cells"].values())
    feedbacks = list(dict.fromkeys(c["feedback"] for c in cells))
    paths = []

    fig, axes = plt.subplots(1, len(feedbacks), figsize=(6 * len(feedbacks), 4), squeeze=False)
    for ax, feedback in zip(axes[0], feedbacks, strict=True):
        group = [c for c in cells if c["feedback"] == feedback]
        width = 0.8 / len(OUTCOMES)
        for i, metric in enumerate(OUTCOMES):
            points = [100 * c["metrics"][metric]["point"] for c in group]
            errors = [
                [100 * (c["metrics"][metric]["point"] - c["metrics"][metric]["low"]) for c in group],
                [100 * (c["metrics"][metric]["high"] - c["metrics"][metric]["point"]) for c in group],
            ]
            ax.bar(
                [x + i * width for x in range(len(group))],
                points,
                width,
                yerr=errors,
                capsize=3,
                label=metric,
            )
        ax.set_xticks([x + width for x in range(len(group))])
        ax.set_xticklabels([f"{c['agent']}\n{c['access']}" for c in group], fontsize=8)
        ax.set_ylim(0, 105)
        ax.set_title(f"{feedback} feedback")
        ax.set_ylabel("% (95% scenario-bootstrap CI)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    paths.append(out_dir / "outcomes.png")
    write_figure_atomic(fig, paths[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    markers = {"prosody": "o", "explicit": "^"}
    for feedback in feedbacks:
        group = [c for c in cells if c["feedback"] == feedback]
        base = group[0]
        for cell in group[1:]:
            deltas = [100 * (cell["metrics"][s]["point"] - base["metrics"][s]["point"]) for s in SHARES]
            ax.scatter(
                range(len(SHARES)),
                deltas,
                marker=markers.get(feedback, "s"),
                label=f"{cell['agent']}@{cell['access']} - {base['agent']}@{base['access']} ({feedback})",
            )
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(SHARES)))
    ax.set_xticklabels([s.replace(" share", "") for s in SHARES])
    ax.set_ylabel("change in share of decision turns (pp)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    paths.append(out_dir / "action_shift.png")
    write_figure_atomic(fig, paths[-1], dpi=120)
    plt.close(fig)
    return paths
