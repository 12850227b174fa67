"""What ``benchmarks/hear2act/ppo_curves.py`` reads off a Hear2Act study's paired evaluation: the audio
policy against its transcript twin and the references (``audio_vs_transcript``), whether a
policy listens (``assent_responses``: its replies to a shared assent), and held-out against
training 1st% (``train_vs_held_out``)."""

from __future__ import annotations

import itertools

import numpy as np
from rich.table import Table

from agents.ppo import DEFAULT_POLICY, ppo_policies
from hear_gym.envs.hear2act.metrics import METRICS_BY_NAME, scenario_sums
from hear_gym.envs.hear2act.user.engine import ReactionKind
from hear_gym.envs.hear2act.user.states import ConcernState
from hear_gym.stats.bootstrap import Estimate, RatioSums, contrast_ci, pooled_ci, ratio_ci

BANK_TAG = "-bank"  # the control trained on the bank's own users
LISTENER = "ask_unless_resolved"  # the rule listener (its own run: an env has one inferrer)


def audio_vs_transcript(records: list[dict], members: list[dict], variant: str, tag: str = "") -> dict:
    """Hear2Act, for one ``variant_of`` run played one way (``tag``: a key of ``PLAYERS``): the
    seed-averaged A+T policy minus the seed-averaged T policy (twin users; for a policy that
    ``extends`` another with audio-only layers (``agents.ppo.ppo_policies``), that policy's T runs), paired by scenario (return
    and 1st%), minus ``ask_until_disclosed@T``, and each policy's return as a share of
    state_aware@T+S's. Where ``records`` hold the rule listener (``LISTENER``), also the ceiling
    of the A+T - T contrast: the listener minus the same T policies (what the best listener we
    have would win over them), and A+T minus the listener."""
    scenarios = sorted({r["item_id"] for r in records})
    by_agent: dict[str, list] = {}
    for record in records:
        by_agent.setdefault(record["agent"], []).append(record)
    twins = [r for r in members if BANK_TAG not in r["name"]]
    heard = [r for r in twins if variant_of(r) == variant and r["settings"]["access"] == "A+T"]
    # a listening head has nothing to hear under T: the T twin of a policy is the one it extends
    policy = heard[0]["settings"].get("policy", DEFAULT_POLICY)
    extends = ppo_policies(heard[0]["settings"]["env_id"])[policy].extends or policy
    text_variant = variant_of({"settings": {**heard[0]["settings"], "policy": extends}})
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
        if LISTENER in sums:
            listener = [(1.0, sums[LISTENER])]
            out[f"{LISTENER}@T+S^ - T, {metric}"] = contrast_ci(listener + terms[len(audio) :]).as_dict()
            minus_listener = [(-1.0, sums[LISTENER])]
            out[f"A+T - {LISTENER}@T+S^, {metric}"] = contrast_ci(
                terms[: len(audio)] + minus_listener
            ).as_dict()
    reference = out["state_aware@T+S, return"]["point"]
    for side in ("A+T", "T"):
        out[f"{side} return / state_aware return"] = out[f"{side}, return"]["point"] / reference
    return out


def variant_of(run: dict) -> str:
    """The policy network, and whether it was fine-tuned from a checkpoint."""
    policy = run["settings"].get("policy", DEFAULT_POLICY)
    return f"{policy}, fine-tuned" if run["settings"].get("init_from") else policy


def assent_responses(records: list[dict]) -> dict[str, dict]:
    """Does a policy listen? After a shared assent (the same words whatever the user feels), the
    share of replies that confirm, split by the user's hidden state at that assent: genuine or
    reluctant acceptance. A policy that hears the user confirms the first and not the second; one
    that cannot (T) can still read the difference off the dialogue: once the user has disclosed
    every concern, an assent to an option that meets them is genuine. So the gap is also taken
    over the assents heard while some concern was still undisclosed, where the words leave
    genuine and reluctant alike; a T gap there would mean a leak. Per agent: each rate and the
    paired gap (genuine minus reluctant) with scenario-bootstrap CIs, the same before full
    disclosure, and the assent counts."""
    scenarios = sorted({r["item_id"] for r in records})
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
                    table[subset, state, 0, index[record["item_id"]]] += reply["action"]["kind"] == "confirm"
                    table[subset, state, 1, index[record["item_id"]]] += 1
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
