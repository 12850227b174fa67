"""What DeliveryPlan gives the trainers (``agents.training_material``): its chat agent, the
source-label oracle's plans as SFT demonstrations under T, the ``deliveryplan`` GRPO task on the
verifier's reward (each case side a row; paired, the original and its edit are one pair: the
same words, one cue apart), and the text its models read. PPO needs nothing here: it trains the
shared ``mlp`` policy on the feature observation and the ``discrete`` catalogue.

GRPO rows are case *sides* (``vr-017/0`` original, ``vr-017/1`` edited); the reward of a reply is
the env's reward for it on that side (Gcite by default): the env plays the case, and for the
edited side first plans the original with the oracle, so the side is scored exactly as in an
episode. Each case is shown with the record order and cue ids its env draws (seeded by the case),
so a GRPO row's prompt and its reward's episode show the same ids, and a pair's two prompts
differ in the source record alone (and in the cue ids, which every side draws afresh).

Every material of a partition comes from its training material only (``splits.training_sides``,
``training_pairs``): a training case whose edit is a held-out key gives its original side and
no pair.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.deliveryplan.baselines import OracleAgent
from agents.deliveryplan.llm import PLAN_INSTRUCTION, LLMPlanAgent, plan_messages
from agents.llm.decision_reward import DecisionReward
from agents.training_material import (
    DecisionTask,
    Demo,
    DemoSource,
    TrainingMaterial,
    decision_row,
    demo,
    seeded_sample,
)
from hear_gym.core.registry import family
from hear_gym.envs.deliveryplan.case_tables import side_prompt
from hear_gym.envs.deliveryplan.cases import cases_by_id
from hear_gym.envs.deliveryplan.display import CUE_ID, draw_display
from hear_gym.envs.deliveryplan.family import ENV_ID
from hear_gym.envs.deliveryplan.splits import split_ids, training_pairs, training_sides

DEMO_ACCESS = "T"
SIDES = (0, 1)


def side_id(case_id: str, side: int) -> str:
    return f"{case_id}/{side}"


def parse_side_id(item_id: str) -> tuple[str, int]:
    case_id, _, side = item_id.partition("/")
    if case_id not in cases_by_id() or side not in ("0", "1"):
        raise ValueError(f"a DeliveryPlan side id is CASE/0 or CASE/1, got {item_id!r}")
    return case_id, int(side)


def case_seed(case_id: str) -> int:
    """The env seed a case is shown with: fixed per case, so its prompts are the same each time."""
    return int(case_id.removeprefix("vr-"))


class SidePlayer:
    """A text-action env that shows one case side at a time (the edited side after the oracle's
    original plan, read under ``T``)."""

    def __init__(self, case_ids, access: str = DEMO_ACCESS, **env_options: Any) -> None:
        self.env = family(ENV_ID).make(access=access, actions="text", item_ids=list(case_ids), **env_options)
        self.labelled = family(ENV_ID).make(
            access="T", actions="text", item_ids=list(case_ids), **env_options
        )

    def show(self, case_id: str, side: int) -> dict[str, Any]:
        observation, _ = self.env.reset(seed=case_seed(case_id), options={"item_id": case_id})
        if side == 1:
            observation, *_ = self.env.step(self.oracle_reply(case_id, 0))
        return observation

    def oracle_reply(self, case_id: str, side: int) -> str:
        """The oracle's reply to the side as ``show`` shows it (the same ids, read under T)."""
        agent = OracleAgent()
        observation, _ = self.labelled.reset(seed=case_seed(case_id), options={"item_id": case_id})
        if side == 1:
            observation, *_ = self.labelled.step(agent.act(observation))
        return agent.act(observation)

    def score(self, case_id: str, side: int, reply: str) -> tuple[float, bool]:
        self.show(case_id, side)
        _, reward, _, _, info = self.env.step(reply)
        return float(reward), not info["malformed"]


def deliveryplan_demos(
    split: str = "train",
    access: str = DEMO_ACCESS,
    limit: int | None = None,
    seed: int = 0,
    partition: str = "public",
    **env_options: Any,
) -> list[Demo]:
    """The oracle's reply to the sides of ``split`` of ``partition``: for ``train``, its
    training sides (no held-out key); ``limit`` of the sides drawn with ``seed`` (kept in order)
    when given."""
    if split == "train":
        sides = list(training_sides(partition))
    else:
        sides = [(c, s) for c in split_ids(split, partition) for s in SIDES]
    player = SidePlayer(sorted({c for c, _ in sides}), access, partition=partition, **env_options)
    return [
        demo(plan_messages(player.show(c, s)), player.oracle_reply(c, s), item_id=side_id(c, s))
        for c, s in seeded_sample(sides, limit, seed)
    ]


class SideReward(DecisionReward):
    """The env's reward for a reply on its case side."""

    def __init__(self, case_ids, eos_token_ids, env_options: dict[str, Any]) -> None:
        super().__init__(eos_token_ids)
        self.player = SidePlayer(case_ids, **env_options)

    def score(self, item_id: str, reply: str) -> tuple[float, bool]:
        return self.player.score(*parse_side_id(item_id), reply)


def check(settings) -> dict[str, Any]:
    options = dict(settings.env_options or {})
    unknown = set(options) - {"partition", "reward"}
    if unknown or settings.state_probe:
        raise ValueError(
            f"the deliveryplan task takes env options partition and reward, got {sorted(unknown)}"
        )
    if options.get("reward") == "counterfactual_consistency":
        raise ValueError("a GRPO row is one case side: use a per-side reward, not counterfactual_consistency")
    return options


def build(settings, eos_token_ids: set[int]):
    options = check(settings)
    partition = options.get("partition", "public")
    if settings.paired:
        sides = [(c, s) for c in training_pairs(partition)[: settings.item_limit] for s in SIDES]
    else:
        sides = list(training_sides(partition))[
            : None if settings.item_limit is None else 2 * settings.item_limit
        ]
    case_ids = sorted({c for c, _ in sides})
    player = SidePlayer(case_ids, **options)
    prompts = {(c, s): plan_messages(player.show(c, s)) for c, s in sides}
    family_of = {c: cases_by_id()[c].original.source_key[0] for c in case_ids}
    if settings.paired:
        rows = [
            decision_row(prompts[c, 0], side_id(c, 0), family_of[c], prompts[c, 1], side_id(c, 1))
            for c, s in sides
            if s == 0
        ]
    else:
        rows = [decision_row(prompts[c, s], side_id(c, s), family_of[c]) for c, s in sides]
    return rows, SideReward(case_ids, eos_token_ids, options)


def corpus() -> list[str]:
    """The instruction, each distinct prompt line (with and without labels, cue ids left out: they
    are drawn per episode) and the oracle's reply for one case of every key. Kept small: every
    family's corpus trains the one tokenizer of the tiny offline models."""
    display = draw_display(np.random.default_rng(0))
    lines: dict[str, None] = {}
    replies: dict[tuple[str, str], str] = {}
    player = SidePlayer(split_ids("all"))
    for case_id in split_ids("all"):
        case = cases_by_id()[case_id]
        for side, view in enumerate((case.original, case.edited)):
            for labels in (True, False):
                for line in side_prompt(case, side, display, labels=labels).splitlines():
                    lines[CUE_ID.sub("", line).strip()] = None
            if view.source_key not in replies:
                replies[view.source_key] = player.oracle_reply(case_id, side)
    return [PLAN_INSTRUCTION, *lines, *replies.values()]


MATERIAL = TrainingMaterial(
    chat_agent=LLMPlanAgent,
    demos=DemoSource(deliveryplan_demos, DEMO_ACCESS),
    grpo_tasks={
        "deliveryplan": DecisionTask(
            check=check,
            access=lambda settings: DEMO_ACCESS,
            build=build,
            eval_options=lambda options: dict(options),
        )
    },
    corpus=corpus,
    instructions=lambda: [PLAN_INSTRUCTION],
)
