"""PPO learning curves: does a policy that hears the user learn to use it?

Prints tables and writes benchmarks/out/ppo_curves/<study>.json (plus every training run under
benchmarks/out/ppo_curves/<study>/; a finished run with the same settings is reused). Each study
is PPO on the feature observation, ``--seeds`` seeds, trained on the training split and
evaluated on held-out test episodes through the runner:

* Hear2Act under prosody-mediated feedback with a turn cost: PPO on audio features (A+T) vs PPO
  on transcript features (T), against the rule references ``state_aware@T+S``,
  ``ask_before_confirm@T`` and ``ask_until_disclosed@T``, with the default ``mlp`` policy and
  with the ``per_option`` policy (``-opt`` runs: one shared network scores each option's row);
  then the same policies under explicit feedback, where the words already say everything and
  audio and transcript should be level. Hear2Act policies train with twin users
  (``hidden_users="resample"``, training envs only); one control run per seed trains the T
  policy on the bank's own users (``ppo-T-bank``) to show what that costs on held-out scenarios.
* Hear2Act under prosody with higher turn costs (``hear2act-prosody-cost0.1`` and
  ``hear2act-prosody-cost0.15``, ``per_option`` only): asking loses more there, so listening has
  more to win (``benchmarks/hear2act/listening_value.py``: with a calibrated probe, a rule
  listener beats the best transcript policy from turn cost 0.1 on). Fine-tuned from the prosody
  study's checkpoint of the same seed (``-opt-tuned``, ``--init-from``); at 0.15 also trained
  from scratch (``-opt``); at 0.1 also the audio policy with a listening head
  (``-listen-tuned``, ``per_option_listening``, from the same checkpoint).
* VoiceGate (speaker-switch items): PPO on audio features (A+T) vs text features (T): switch mute
  and false execution.

Beside the references, the rule listener ``ask_unless_resolved@T+S^`` (the calibrated assent
probe of ``benchmarks/hear2act/listening_value.py``) plays the prosody studies' test episodes in
a run of its own: the listener minus the T policies is the most we know a listener to win over
them, the ceiling of the A+T - T contrast. Analysis: ``benchmarks/hear2act/ppo_curves_analysis.py``.

Whether a Hear2Act policy listens is read off its replies to a shared assent (the same words
whatever the user feels): how often it confirms after a genuine and after a reluctant one. The T
policies cannot hear the difference, so a gap there would mean a leak.

The final checkpoints of every seed and the references play the same test episodes
(``EVAL_ROLLOUTS`` rollouts each) in one run per study, each checkpoint twice (sampling its
actions, and ``-greedy``: the most likely action), so the contrasts are paired (scenario
bootstrap for Hear2Act, item-group bootstrap for VoiceGate). Trainings run ``--workers`` at a
time.

    python -m benchmarks.hear2act.ppo_curves [--steps N] [--seeds K] [--option-seeds K] [--workers W]
                                    [--only STUDY] [--policy NAME]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

import hear_gym  # noqa: F401
from agents.hear2act.audio_probe import ConcernInferrer
from agents.ppo import DEFAULT_POLICY, GreedyPPOAgent, PPOAgent, ppo_policies
from benchmarks.hear2act.listening_value import (  # the sibling benchmark's probe
    LISTENER_FEATURES,
    OPERATING_POINTS,
    calibrated_probes,
    probe_path,
)
from benchmarks.hear2act.ppo_curves_analysis import (
    BANK_TAG,
    LISTENER,
    assent_responses,
    audio_vs_transcript,
    listening_table,
    train_vs_held_out,
    variant_of,
)
from hear_gym.cli.common import available_agents
from hear_gym.core.registry import family
from hear_gym.core.run_config import Cell, RunConfig
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.provenance import file_fingerprint
from hear_gym.eval.results import read_results
from hear_gym.speech.cache import RenderCache
from hear_gym.speech.renderers import make_renderer
from training.ppo.train import PPOSettings, train

OUT = Path(__file__).resolve().parents[1] / "out"
HEAR2ACT = "hear_gym/Hear2Act-v0"
VOICEGATE = "hear_gym/VoiceGate-v0"
TURN_COST = 0.05
# Prosody studies (per_option only) where each turn costs more: asking then loses more per
# dialogue to state_aware, so listening has more to win.
COSTLY = {"hear2act-prosody-cost0.1": 0.10, "hear2act-prosody-cost0.15": 0.15}
FROM_SCRATCH = ("hear2act-prosody-cost0.15",)  # the others are only fine-tuned
TURN_COSTS = {"hear2act-prosody": TURN_COST, "hear2act-explicit": TURN_COST, **COSTLY}
EVAL_ROLLOUTS = 3  # per test scenario in the paired evaluations
TWINS = {"hidden_users": "resample"}  # Hear2Act training envs only
OPTION_TAG = "-opt"  # the per_option policy (agents.hear2act.option_policy)
TUNED_TAG = "-opt-tuned"  # per_option, fine-tuned from the prosody study's checkpoint of its seed
# per_option_listening (a listening head on the confirm logit), fine-tuned from the same checkpoint
LISTEN_TAG = "-listen-tuned"
LISTEN_STUDY = "hear2act-prosody-cost0.1"
# Each checkpoint plays twice: sampling its actions as in training (cell ``NAME``) and taking the
# most likely action as SB3's evaluate_policy does (cell ``NAME-greedy``).
GREEDY_TAG = "-greedy"
PLAYERS = {"": PPOAgent, GREEDY_TAG: GreedyPPOAgent}
LISTENER_POINT = 0.01  # the rule listener's probe operating point (benchmarks.hear2act.listening_value)
HYPER = dict(n_envs=8, n_steps=128, batch_size=256, n_epochs=4, learning_rate=3e-4, ent_coef=0.01)


def studies(steps: int, seeds: int, root: Path, option_seeds: int | None = None) -> list[dict]:
    """Every training run (study, name, PPOSettings kwargs), the headline study first. Audio runs
    share one on-disk render cache, so each utterance is synthesized once for all of them. The
    per_option runs take ``option_seeds`` seeds (default: ``seeds``)."""
    runs = []
    render_cache = root / "render_cache"

    def add(
        study: str,
        env_id: str,
        access: str,
        env_options: dict,
        train: dict,
        tag: str = "",
        n_seeds: int = seeds,
        **extra,
    ) -> None:
        if access != "T":
            env_options = {**env_options, "audio_cache_dir": str(render_cache)}
        for seed in range(n_seeds):
            settings = dict(
                env_id=env_id, access=access, env_options=env_options, train_env_options=train, seed=seed
            )
            settings.update(extra)
            if access == "T":  # no measured leaf to standardize; False keeps earlier T runs reusable
                settings["normalize_observation"] = False
            runs.append({"study": study, "name": f"ppo-{access}{tag}-s{seed}", "settings": settings})

    for access in ("A+T", "T"):
        add("hear2act-prosody", HEAR2ACT, access, {"feedback": "prosody", "turn_cost": TURN_COST}, TWINS)
    add("hear2act-prosody", HEAR2ACT, "T", {"feedback": "prosody", "turn_cost": TURN_COST}, {}, BANK_TAG)
    n_seeds = seeds if option_seeds is None else option_seeds
    for access in ("A+T", "T"):
        prosody = {"feedback": "prosody", "turn_cost": TURN_COST}
        add("hear2act-prosody", HEAR2ACT, access, prosody, TWINS, OPTION_TAG, n_seeds, policy="per_option")
    for (study, turn_cost), access in itertools.product(COSTLY.items(), ("A+T", "T")):
        costly = {"feedback": "prosody", "turn_cost": turn_cost}
        if study in FROM_SCRATCH:
            add(study, HEAR2ACT, access, costly, TWINS, OPTION_TAG, n_seeds, policy="per_option")
        add(study, HEAR2ACT, access, costly, TWINS, TUNED_TAG, n_seeds, policy="per_option")
        if study == LISTEN_STUDY and access == "A+T":
            add(study, HEAR2ACT, access, costly, TWINS, LISTEN_TAG, n_seeds, policy="per_option_listening")
    for access in ("A+T", "T"):
        add("voicegate-switch", VOICEGATE, access, {"family": "speaker_switch"}, {})
    for access in ("A+T", "T"):
        add("hear2act-explicit", HEAR2ACT, access, {"feedback": "explicit", "turn_cost": TURN_COST}, TWINS)
    for access in ("A+T", "T"):
        explicit = {"feedback": "explicit", "turn_cost": TURN_COST}
        add("hear2act-explicit", HEAR2ACT, access, explicit, TWINS, OPTION_TAG, n_seeds, policy="per_option")
    for run in runs:
        run["settings"].update(HYPER, total_steps=steps, eval_every=max(steps // 4, 1), eval_limit=48)
        tuned = next((tag for tag in (TUNED_TAG, LISTEN_TAG) if tag in run["name"]), None)
        if tuned:  # starts from the same seed's turn-cost-0.05 per_option checkpoint
            start = run["name"].replace(tuned, OPTION_TAG)
            run["settings"]["init_from"] = str(root / "hear2act-prosody" / start / "checkpoints" / "final")
    return runs


def train_one(run: dict, root: Path) -> dict:
    out = root / run["study"] / run["name"]
    result = train(PPOSettings(out=out, wandb_project=None, progress=False, **run["settings"]))
    curve = [json.loads(line) for line in (out / "curve.jsonl").read_text().splitlines()]
    return {**run, "checkpoint": result["checkpoint"], "curve": curve}


def paired_evaluation(trained: list[dict], eval_dir: Path) -> dict:
    """Final checkpoints and references on the same held-out episodes, one run in ``eval_dir``."""
    env_id = trained[0]["settings"]["env_id"]
    env_family = family(env_id)
    cell_options, episodes, env_kwargs = held_out_episodes(trained)
    cells, agents = [], {}
    references = (
        [("state_aware", "T+S"), ("ask_before_confirm", "T"), ("ask_until_disclosed", "T")]
        if env_id == HEAR2ACT
        else [("text_only", "T")]
    )
    registered = available_agents(env_family)
    for agent, access in references:
        cells.append(Cell(agent, access, cell_options))
        agents[agent] = registered[agent].load()
    for run in trained:
        for tag, player in PLAYERS.items():
            name = run["name"] + tag
            cells.append(Cell(name, run["settings"]["access"], cell_options))
            agents[name] = functools.partial(player.from_checkpoint, run["checkpoint"])
    config = RunConfig(env_id, tuple(cells), episodes, EVAL_ROLLOUTS, seed=0, env_kwargs=env_kwargs)
    return evaluate(eval_dir, config, agents, progress=False)


def listener_evaluation(trained: list[dict], eval_dir: Path) -> Path:
    """The rule listener ``ask_unless_resolved@T+S^`` (benchmarks.hear2act.listening_value's assent probe at
    ``LISTENER_POINT``, trained there if missing) on the paired evaluation's episodes (same
    episode seeds, so its records pair with that run's), in a run of its own because an env has
    one state inferrer. Its results file."""
    cache = RenderCache(make_renderer("espeak"), max_bytes=512 * 2**20)
    probe = calibrated_probes(cache, LISTENER_FEATURES, OPERATING_POINTS)[LISTENER_POINT]
    cell_options, episodes, env_kwargs = held_out_episodes(trained)
    plugins = (("state_inferrer", file_fingerprint(probe_path("espeak", LISTENER_FEATURES, LISTENER_POINT))),)
    config = RunConfig(
        HEAR2ACT,
        (Cell(LISTENER, "T+S^", cell_options),),
        episodes,
        EVAL_ROLLOUTS,
        seed=0,
        env_kwargs=env_kwargs,
        plugins=plugins,
    )
    agents = {LISTENER: available_agents(family(HEAR2ACT))[LISTENER].load()}
    evaluate(eval_dir, config, agents, progress=False, env_objects={"state_inferrer": ConcernInferrer(probe)})
    return eval_dir / "results.jsonl"


def held_out_episodes(trained: list[dict]) -> tuple[tuple, tuple, tuple]:
    """(cell options, test episode ids, shared env kwargs) of a study's evaluations."""
    env_id = trained[0]["settings"]["env_id"]
    env_options = trained[0]["settings"]["env_options"]
    env_family = family(env_id)
    cell_options = tuple((k, str(env_options[k])) for k in env_family.cell_options)
    if env_id == VOICEGATE:
        from hear_gym.envs.voicegate.family import item_ids

        return cell_options, tuple(item_ids("test", ("speaker_switch",))), ()  # the items name their family
    shared = {k: v for k, v in env_options.items() if k not in dict(cell_options) and k != "audio_cache_dir"}
    return cell_options, tuple(env_family.item_ids("test")), tuple(sorted(shared.items()))


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=150_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--option-seeds", type=int, default=None, help="Seeds of the per_option runs.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default=None, help="Run one study (hear2act-prosody, ...).")
    parser.add_argument(
        "--policy",
        default=None,
        choices=sorted(ppo_policies(HEAR2ACT)),
        help="Only the runs of this policy network.",
    )
    args = parser.parse_args()
    root = OUT / "ppo_curves"
    runs = studies(args.steps, args.seeds, root, args.option_seeds)
    runs = [r for r in runs if args.only in (None, r["study"])]
    runs = [r for r in runs if args.policy in (None, r["settings"].get("policy", DEFAULT_POLICY))]
    policy_tag = "" if args.policy is None else f"-{args.policy}"  # evaluated apart from the whole study
    trained = []
    with ProcessPoolExecutor(args.workers) as pool:
        # fine-tuned runs after the rest: they start from checkpoints of the first wave
        for wave in (
            [r for r in runs if "init_from" not in r["settings"]],
            [r for r in runs if "init_from" in r["settings"]],
        ):
            trained += list(pool.map(train_one, wave, [root] * len(wave)))
    console = Console(width=200)  # wide tables stay readable in a log file
    report = {}
    for study in sorted({r["study"] for r in trained}):
        members = [r for r in trained if r["study"] == study]
        eval_dir = root / study / f"paired_eval{policy_tag}"
        metadata = paired_evaluation(members, eval_dir)
        env_family = family(members[0]["settings"]["env_id"])
        for table in env_family.tables(metadata):
            console.print(table)
        curves = Table(
            "run", *(str(r["step"]) for r in members[0]["curve"] if r["kind"] == "eval"), title=study
        )
        key = "return" if members[0]["settings"]["env_id"] == HEAR2ACT else "switch_mute"
        for run in members:
            evals = [r for r in run["curve"] if r["kind"] == "eval"]
            curves.add_row(
                run["name"], *(f"{e['metrics'][key]['point']:.3f}" for e in evals if key in e["metrics"])
            )
        console.print(curves)
        listening = None
        if members[0]["settings"]["env_id"] == HEAR2ACT:
            console.print(train_vs_held_out(study, members, metadata))
            records = read_results(eval_dir / "results.jsonl")
            if members[0]["settings"]["env_options"]["feedback"] == "prosody":  # the shared assent
                listener_dir = root / study / f"listener_eval-{LISTENER_POINT}"
                records += read_results(listener_evaluation(members, listener_dir))
                listening = assent_responses(records)
                console.print(listening_table(study, listening))
            contrast = {}
            for variant, (tag, player) in itertools.product(
                sorted({variant_of(r) for r in members}), PLAYERS.items()
            ):
                key = f"{variant}, {player.__name__}"
                contrast[key] = audio_vs_transcript(records, members, variant, tag)
                summary = Table("measure", "point [95% CI]", title=f"{study}, {key}: audio vs transcript")
                for name, value in contrast[key].items():
                    text = (
                        f"{value:.2f}"
                        if isinstance(value, float)
                        else (f"{value['point']:.3f} [{value['low']:.3f}, {value['high']:.3f}]")
                    )
                    summary.add_row(name, text)
                console.print(summary)
        else:
            contrast = None
        report[study] = {
            "steps": args.steps,
            "seeds": args.seeds,
            "option_seeds": args.seeds if args.option_seeds is None else args.option_seeds,
            "turn_cost": TURN_COSTS.get(study),
            "hyper": HYPER,
            "runs": [{k: r[k] for k in ("name", "settings", "curve")} for r in members],
            "paired": {"cells": metadata["cells"], "contrasts": metadata.get("contrasts")},
            "audio_vs_transcript": contrast,
            "replies_to_shared_assent": listening,
        }
        (root / f"{study}{policy_tag}.json").write_text(json.dumps(report[study], indent=2, default=str))
    return report


if __name__ == "__main__":
    main()
