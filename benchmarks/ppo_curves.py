"""PPO learning curves: does a policy that hears the user learn to use it?

Prints tables and writes benchmarks/out/ppo_curves/<study>.json (plus every training run under
benchmarks/out/ppo_curves/<study>/; a finished run with the same settings is reused). Two studies, each PPO on the feature observation, ``SEEDS`` seeds,
trained on the training split and evaluated on held-out test episodes through the runner:

* Hear2Act under prosody-mediated feedback with a turn cost: PPO on audio features (A+T) vs PPO
  on transcript features (T), against the rule references ``state_aware@T+S``,
  ``ask_before_confirm@T`` and ``ask_until_disclosed@T``, with the default ``mlp`` policy and
  with the ``per_option`` policy (``-opt`` runs: one shared network scores each option's row); then the same policies under
  explicit feedback, where the words already say everything and audio and transcript should be
  level. Hear2Act policies train with twin users (``hidden_users="resample"``, training envs
  only); one control run per seed trains the T policy on the bank's own users (``ppo-T-bank``)
  to show what that costs on held-out scenarios.
* Hear2Act under prosody with higher turn costs (``hear2act-prosody-cost0.1`` and
  ``hear2act-prosody-cost0.15``, ``per_option`` only): asking loses more there, so listening has
  more to win (``benchmarks/hear2act_listening_value.py``: with a calibrated probe, a rule
  listener beats the best transcript policy from turn cost 0.1 on). Fine-tuned from the prosody
  study's checkpoint of the same seed (``-opt-tuned``, ``--init-from``); at 0.15 also trained
  from scratch (``-opt``); at 0.1 also the audio policy with a listening head
  (``-listen-tuned``, ``per_option_listening``, from the same checkpoint).
* VoiceGate (speaker-switch items): PPO on audio features (A+T) vs text features (T): switch mute
  and false execution.

Whether a Hear2Act policy listens is read off its replies to a shared assent (the same words
whatever the user feels): how often it confirms after a genuine and after a reluctant one. The T
policies cannot hear the difference, so a gap there would mean a leak.

The final checkpoints of every seed and the references play the same test episodes
(``EVAL_ROLLOUTS`` rollouts each) in one run per study, each checkpoint twice (sampling its
actions, and ``-greedy``: the most likely action), so the contrasts are paired (scenario bootstrap for Hear2Act, item-group bootstrap for
VoiceGate). Trainings run ``--workers`` at a time.

    python benchmarks/ppo_curves.py [--steps N] [--seeds K] [--option-seeds K] [--workers W]
                                    [--only STUDY] [--policy NAME]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

import hear_gym  # noqa: F401
from agents.ppo import DEFAULT_POLICY, EXTENDS, POLICIES, GreedyPPOAgent, PPOAgent
from hear_gym.core.registry import family
from hear_gym.envs.hear2act.user.engine import ReactionKind
from hear_gym.envs.hear2act.user.states import ConcernState
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.runner import Cell, RunConfig
from hear_gym.stats.bootstrap import Estimate
from training.ppo import PPOSettings, train

OUT = Path(__file__).parent / "out"
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
BANK_TAG = "-bank"  # the control trained on the bank's own users
OPTION_TAG = "-opt"  # the per_option policy (agents.hear2act.option_policy)
TUNED_TAG = "-opt-tuned"  # per_option, fine-tuned from the prosody study's checkpoint of its seed
# per_option_listening (a listening head on the confirm logit), fine-tuned from the same checkpoint
LISTEN_TAG = "-listen-tuned"
LISTEN_STUDY = "hear2act-prosody-cost0.1"
# Each checkpoint plays twice: sampling its actions as in training (cell ``NAME``) and taking the
# most likely action as SB3's evaluate_policy does (cell ``NAME-greedy``).
GREEDY_TAG = "-greedy"
PLAYERS = {"": PPOAgent, GREEDY_TAG: GreedyPPOAgent}
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
    env_options = trained[0]["settings"]["env_options"]
    env_family = family(env_id)
    cell_options = tuple((k, str(env_options[k])) for k in env_family.cell_options)
    cells, agents = [], {}
    references = (
        [("state_aware", "T+S"), ("ask_before_confirm", "T"), ("ask_until_disclosed", "T")]
        if env_id == HEAR2ACT
        else [("text_only", "T")]
    )
    from importlib.metadata import entry_points

    registered = {ep.name: ep for ep in entry_points(group=env_family.agent_group)}
    for agent, access in references:
        cells.append(Cell(agent, access, cell_options))
        agents[agent] = registered[agent].load()
    for run in trained:
        for tag, player in PLAYERS.items():
            name = run["name"] + tag
            cells.append(Cell(name, run["settings"]["access"], cell_options))
            agents[name] = functools.partial(player.from_checkpoint, run["checkpoint"])
    episodes = env_family.episode_ids("test")
    if env_id == VOICEGATE:
        from hear_gym.envs.voicegate.family import item_ids

        episodes = item_ids("test", ("speaker_switch",))
    shared = {k: v for k, v in env_options.items() if k not in dict(cell_options) and k != "audio_cache_dir"}
    if env_id == VOICEGATE:
        shared = {}  # the items name their family
    env_kwargs = tuple(sorted(shared.items()))
    config = RunConfig(env_id, tuple(cells), tuple(episodes), EVAL_ROLLOUTS, seed=0, env_kwargs=env_kwargs)
    return evaluate(eval_dir, config, agents, progress=False)


def audio_vs_transcript(eval_dir: Path, members: list[dict], variant: str, tag: str = "") -> dict:
    """Hear2Act, for one ``variant_of`` run played one way (``tag``: a key of ``PLAYERS``): the
    seed-averaged A+T policy minus the seed-averaged T policy (twin users; for a policy that
    ``EXTENDS`` another with audio-only layers, that policy's T runs), paired by scenario (return
    and 1st%), minus ``ask_until_disclosed@T``, and each policy's return as a share of
    state_aware@T+S's."""
    from hear_gym.envs.hear2act.metrics import METRICS_BY_NAME, scenario_sums
    from hear_gym.eval.results import read_results
    from hear_gym.stats.bootstrap import contrast_ci, pooled_ci

    records = read_results(eval_dir / "results.jsonl")
    scenarios = sorted({r["scenario_id"] for r in records})
    by_agent: dict[str, list] = {}
    for record in records:
        by_agent.setdefault(record["agent"], []).append(record)
    twins = [r for r in members if BANK_TAG not in r["name"]]
    heard = [r for r in twins if variant_of(r) == variant and r["settings"]["access"] == "A+T"]
    # a listening head has nothing to hear under T: the T twin of a policy is the one it extends
    policy = heard[0]["settings"].get("policy", DEFAULT_POLICY)
    text_variant = variant_of({"settings": {**heard[0]["settings"], "policy": EXTENDS.get(policy, policy)}})
    audio = [r["name"] + tag for r in heard]
    text = [
        r["name"] + tag for r in twins if variant_of(r) == text_variant and r["settings"]["access"] == "T"
    ]
    out = {}
    for metric in ("return", "1st%"):
        sums = {a: scenario_sums(e, scenarios, METRICS_BY_NAME[metric]) for a, e in by_agent.items()}
        terms = [(1 / len(audio), sums[a]) for a in audio] + [(-1 / len(text), sums[t]) for t in text]
        out[f"A+T - T, {metric}"] = contrast_ci(terms).as_dict()
        out[f"A+T, {metric}"] = pooled_ci([sums[a] for a in audio]).as_dict()
        out[f"T, {metric}"] = pooled_ci([sums[t] for t in text]).as_dict()
        out[f"state_aware@T+S, {metric}"] = pooled_ci([sums["state_aware"]]).as_dict()
        best_text = [(-1.0, sums["ask_until_disclosed"])]  # the best transcript policy we know
        out[f"A+T - ask_until_disclosed@T, {metric}"] = contrast_ci(terms[: len(audio)] + best_text).as_dict()
    reference = out["state_aware@T+S, return"]["point"]
    for side in ("A+T", "T"):
        out[f"{side} return / state_aware return"] = out[f"{side}, return"]["point"] / reference
    return out


def variant_of(run: dict) -> str:
    """The policy network, and whether it was fine-tuned from a checkpoint."""
    policy = run["settings"].get("policy", DEFAULT_POLICY)
    return f"{policy}, fine-tuned" if run["settings"].get("init_from") else policy


def assent_responses(eval_dir: Path) -> dict[str, dict]:
    """Does a policy listen? After a shared assent (the same words whatever the user feels), the
    share of replies that confirm, split by the user's hidden state at that assent: genuine or
    reluctant acceptance. A policy that hears the user confirms the first and not the second; one
    that cannot (T) can still read the difference off the dialogue: once the user has disclosed
    every concern, an assent to an option that meets them is genuine. So the gap is also taken
    over the assents heard while some concern was still undisclosed, where the words leave
    genuine and reluctant alike; a T gap there would mean a leak. Per agent: each rate and the
    paired gap (genuine minus reluctant) with scenario-bootstrap CIs, the same before full
    disclosure, and the assent counts."""
    from hear_gym.eval.results import read_results
    from hear_gym.stats.bootstrap import RatioSums, contrast_ci, ratio_ci

    records = read_results(eval_dir / "results.jsonl")
    scenarios = sorted({r["scenario_id"] for r in records})
    index = {scenario: i for i, scenario in enumerate(scenarios)}
    states = (ConcernState.GENUINE_ACCEPTANCE.value, ConcernState.RELUCTANT_ACCEPTANCE.value)
    # agent -> [all assents / before full disclosure, state, (confirms, assents), scenario]
    counts: dict[str, np.ndarray] = {}
    for record in records:
        table = counts.setdefault(record["agent"], np.zeros((2, 2, 2, len(scenarios))))
        for heard, reply in itertools.pairwise(record["turns"]):
            if heard["reaction"] == ReactionKind.SHARED_ASSENT.value and reply["action"]:
                state = states.index(heard["concern_state"])
                undisclosed = len(heard["disclosed"]) < len(record["hidden_concerns"])
                for subset in (0, 1) if undisclosed else (0,):
                    table[subset, state, 0, index[record["scenario_id"]]] += (
                        reply["action"]["kind"] == "confirm"
                    )
                    table[subset, state, 1, index[record["scenario_id"]]] += 1
    out = {}
    for agent, table in counts.items():
        genuine, reluctant = (RatioSums(table[0, i, 0], table[0, i, 1]) for i in range(2))
        early = [RatioSums(table[1, i, 0], table[1, i, 1]) for i in range(2)]
        out[agent] = {
            "confirm after genuine": ratio_ci(genuine).as_dict(),
            "confirm after reluctant": ratio_ci(reluctant).as_dict(),
            "gap": contrast_ci([(1, genuine), (-1, reluctant)]).as_dict(),
            "gap before full disclosure": contrast_ci([(1, early[0]), (-1, early[1])]).as_dict(),
            "assents": {"genuine": int(table[0, 0, 1].sum()), "reluctant": int(table[0, 1, 1].sum())},
        }
    return out


def listening_table(study: str, responses: dict[str, dict]) -> Table:
    table = Table(
        "agent",
        "confirm after genuine assent %",
        "confirm after reluctant assent %",
        "gap, points [95% CI]",
        "gap before full disclosure",
        "assents (genuine / reluctant)",
        title=f"{study}: replies to a shared assent",
    )
    for agent, row in sorted(responses.items()):
        assents = row["assents"]
        table.add_row(
            agent,
            Estimate(**row["confirm after genuine"]).percent(),
            Estimate(**row["confirm after reluctant"]).percent(),
            Estimate(**row["gap"]).percent(signed=True),
            Estimate(**row["gap before full disclosure"]).percent(signed=True),
            f"{assents['genuine']} / {assents['reluctant']}",
        )
    return table


def last_training_rollouts(curve: list[dict], metric: str, rollouts: int = 10) -> float:
    """The mean of ``metric`` over the last ``rollouts`` training rows (the sampled policy on
    training episodes)."""
    rows = [r[metric] for r in curve if r["kind"] == "train" and metric in r][-rollouts:]
    return sum(rows) / len(rows)


def train_vs_held_out(study: str, members: list[dict], metadata: dict) -> Table:
    """1st% on the training episodes of the last rollouts vs on the held-out test scenarios: a
    policy that learned the training scenarios by heart scores on the first, not the second."""
    table = Table("run", "training users", "1st% train (last 10 rollouts)", "1st% held-out", title=study)
    for run in members:
        users = run["settings"]["train_env_options"].get("hidden_users", "bank")
        cell = next(v for k, v in metadata["cells"].items() if k.startswith(f"{run['name']}@"))
        held_out = cell["metrics"]["1st%"]["point"]
        table.add_row(
            run["name"], users, f"{last_training_rollouts(run['curve'], '1st%'):.1f}", f"{100 * held_out:.1f}"
        )
    return table


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=150_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--option-seeds", type=int, default=None, help="Seeds of the per_option runs.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default=None, help="Run one study (hear2act-prosody, ...).")
    parser.add_argument(
        "--policy", default=None, choices=sorted(POLICIES), help="Only the runs of this policy network."
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
            if members[0]["settings"]["env_options"]["feedback"] == "prosody":  # the shared assent
                listening = assent_responses(eval_dir)
                console.print(listening_table(study, listening))
            contrast = {}
            for variant, (tag, player) in itertools.product(
                sorted({variant_of(r) for r in members}), PLAYERS.items()
            ):
                key = f"{variant}, {player.__name__}"
                contrast[key] = audio_vs_transcript(eval_dir, members, variant, tag)
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
