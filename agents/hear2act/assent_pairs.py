"""Counterfactual Hear2Act assent pairs and their decision reward, for (paired) GRPO of text models
(and of audio models: ``agents.hear2act.audio_assent`` builds their rows with ``replayed_rows``); the
``hear2act_assent`` task of Hear2Act's training material (``agents.hear2act.training_material``).

The trap the paper describes: under prosody-mediated feedback a user who genuinely accepts the
current recommendation and one who accepts it reluctantly say the same words ("Okay, sounds
good."); only the delivery differs, so an assistant that reads words confirms too early. A pair
(``AssentPair``) is ONE dialogue transcript at such an assent turn, twice:

* x+ (``resolved``): the user genuinely accepts the current option (it meets all three hidden
  concerns, it is the gold): the right move is CONFIRM;
* x- (``unresolved``): the user accepts it reluctantly (it meets the hard constraint L1 and the
  budget, misses L2 and/or L3): the right move is to keep eliciting (ASK, CLARIFY) or move on.

Through T+S^ (card P6d: the transcript plus the sentence a ``StateInferrer`` writes from the
turn's audio) the two prompts differ only in that sentence; through T+S (card P6b, the
ground-truth reference) only in the tag; through T not at all; through A+T only in the audio.

Why a pair needs a second hidden user, not just a forced delivery. The env's reward depends on
the final option and the user's hidden concerns, never on a delivery label: forcing a resolved
delivery onto a reluctant acceptance would make CONFIRM end on a suboptimal option on *both*
sides, and the pair would teach a model to ignore the very channel it is meant to read. The
delivery must mean what it says, so the two sides are two users. The generator makes this
principled: the satisfaction matrix is public (every option describes every concern dimension)
and the hidden (L2, L3) is one of several "consistent pairs" of a strong and a moderate column
that the visible world makes equally likely (``hear_gym/envs/hear2act/scenarios/generator.py``,
steps 2-3). So one side is the scenario's own user and the other its *twin*: the same L1, the
same visible world (options, budget, request, voice), another consistent (L2, L3) under which
the current option has the opposite state. ``twin_scenario`` builds it from the public matrix
(read back from the descriptions with the domain's phrasings, checked against the scenario's
own ``satisfies``) and validates it as a ``Scenario`` (all the bank's invariants hold).

Decision points (``assent_pairs``) are found by playing the env (text actions) and reading its
user engine's reactions, never from option roles or satisfaction patterns: for each scenario of
the split (a ``StableRng`` keyed by seed and scenario id draws everything), the standardized
opening, optionally one recommendation the user rejects in words (over the budget or breaking
the stated hard constraint), then a recommendation the user answers with the shared acceptance
words (``ReactionKind.SHARED_ASSENT``). The twin is replayed with the same env seed and the same
replies; the pair is kept only when the two transcripts are identical (they are whenever the
earlier user turns depend on L1 and the budget alone, which this construction ensures), and the
delivery labels are the env's own draws (one draw, the same index into each state's labels).

Replaying (``DecisionPoint``: scenario id, env seed, the assistant replies after the opening,
and the twin's concerns or None): a text-action env is made as ``gym.make`` makes it, then
``reset(seed, options={"item_id": ..., "hidden_user": <the twin, if any>})`` and the
replies.

The reward (``AssentReward``) is defined by continuation, so there is one definition, the env's:
replay the side's decision point in a text-action env with the given reward options (``reward``,
``turn_cost``, ``feedback``, any other env option), step the model's reply, let
``StateAwareAgent`` under T+S finish the dialogue, and return the env's episode return
(``info["episode"]["return"]``, the opening and the replayed turns included, the same on both
sides). A premature CONFIRM on x- ends the dialogue on the reluctantly accepted option (0 under
``reward="success"``, its partial credit under ``"tiered"``), whereas eliciting lets the
continuation find the gold; on x+ eliciting only costs turns. So with ``turn_cost > 0``, CONFIRM
wins on x+ and ASK/CLARIFY win on x-. A reply cut by the token cap before its end-of-turn token
is stepped as the empty reply (invalid: the turn is used and penalized). It logs the mean reward
per side (``reward/resolved``, ``reward/unresolved``), per family (``reward/hear2act_assent``) and
the valid-format rate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents.hear2act.baselines import StateAwareAgent
from agents.hear2act.prompts import messages
from agents.llm.decision_reward import DecisionReward
from agents.training_material import decision_row
from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.hear2act.actions import AssistantKind, decode, parse_p6a
from hear_gym.envs.hear2act.family import make
from hear_gym.envs.hear2act.scenarios.bank import get_scenario, scenarios_for
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.scenarios.model import Scenario, format_price
from hear_gym.envs.hear2act.scenarios.twins import HiddenUser, twin_concerns, twin_scenario
from hear_gym.envs.hear2act.user.engine import ActionKind, AssistantAction, ReactionKind
from hear_gym.envs.hear2act.user.states import ConcernState, Feedback

ITEM_FAMILY = "hear2act_assent"
SIDES = ("resolved", "unresolved")  # x+, x-
CONTINUATION_ACCESS = "T+S"
# Reactions whose words depend on the budget and L1 only: the same for the user and the twin.
_REJECTIONS = {ReactionKind.REJECT_BUDGET.value, ReactionKind.STATE_REQUIREMENT.value}
_SEED_RANGE = 2**31


# -- decision points and pairs -----------------------------------------------------------------
@dataclass(frozen=True)
class DecisionPoint:
    """One side of a pair, as the env replays it."""

    scenario_id: str
    seed: int  # the env's reset seed (the user's words and deliveries are drawn from it)
    replies: tuple[str, ...]  # assistant replies after the opening; the last recommends ``option``
    option: int
    user: HiddenUser | None  # None: the scenario's own user; else its twin
    resolved: bool
    delivery: str  # the assent turn's delivery label, as the env drew it
    transcript: str
    feedback: str = Feedback.PROSODY.value

    def scenario(self) -> Scenario:
        if self.user is None:
            return get_scenario(self.scenario_id)
        return twin_scenario(self.scenario_id, self.user)


@dataclass(frozen=True)
class AssentPair:
    pair_id: str
    resolved: DecisionPoint  # x+
    unresolved: DecisionPoint  # x-

    def sides(self) -> tuple[tuple[str, DecisionPoint], tuple[str, DecisionPoint]]:
        return (("resolved", self.resolved), ("unresolved", self.unresolved))

    def item_id(self, side: str) -> str:
        if side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, got {side!r}")
        return f"{self.pair_id}/{side}"


class Replay:
    """One text-action env stack that replays decision points of either user."""

    def __init__(self, access: str = "T", state_inferrer=None, **env_options: Any) -> None:
        self.env = make(
            access=access, actions="text", state_inferrer=state_inferrer, split="all", **env_options
        )
        self.base = self.env.unwrapped

    def play(self, scenario_id: str, user: HiddenUser | None, seed: int, replies: tuple[str, ...]):
        """(observation, info) after the opening and ``replies`` with the scenario's own user
        (``user`` None) or a twin; the episode must still run."""
        options = {"item_id": scenario_id} | ({} if user is None else {"hidden_user": user})
        observation, info = self.env.reset(seed=seed, options=options)
        for reply in replies:
            observation, _, terminated, truncated, info = self.env.step(reply)
            if terminated or truncated:
                raise RuntimeError(f"{scenario_id}: the replayed dialogue ended early")
        return observation, info

    def to(self, point: DecisionPoint):
        """Replay ``point``; checks that the env still writes the stored transcript and delivery."""
        if self.base.feedback.value != point.feedback:
            raise ValueError(f"{point.scenario_id} was built under {point.feedback!r} feedback")
        observation, info = self.play(point.scenario_id, point.user, point.seed, point.replies)
        if observation["transcript"] != point.transcript or info["delivery_label"] != point.delivery:
            raise RuntimeError(f"{point.scenario_id}: the env no longer replays this decision point")
        return observation, info

    def close(self) -> None:
        self.env.close()


def recommend_reply(scenario: Scenario, option: int) -> str:
    """A recommendation as the env writes one (visible fields only)."""
    c = scenario.candidate(option)
    return (
        f"[ACTION: RECOMMEND] [OPTION: {option}] I recommend {c.name}, at "
        f"{format_price(c.price)} {scenario.budget.unit} with a {c.rating:.1f}/5 rating."
    )


def assent_pairs(
    split: str = "train",
    limit: int | None = None,
    seed: int = 0,
    feedback: str = "prosody",
    per_scenario: int = 1,
    prefix_rate: float = 0.5,
) -> list[AssentPair]:
    """Up to ``limit`` pairs from ``split``'s scenarios in bank order, ``per_scenario`` decision
    points each (see the module docstring); a pure function of its arguments.
    ``prefix_rate``: the chance that a rejected recommendation comes before the assented one."""
    if Feedback(feedback) is not Feedback.PROSODY:
        raise ValueError(
            "assent pairs need prosody-mediated feedback: under explicit feedback a reluctant "
            "acceptance names its concern in words, so no two sides share a transcript"
        )
    replay = Replay(feedback=feedback)
    pairs: list[AssentPair] = []
    try:
        for scenario in scenarios_for(split):
            if limit is not None and len(pairs) >= limit:
                break
            pairs.extend(_scenario_pairs(replay, scenario, seed, per_scenario, prefix_rate))
    finally:
        replay.close()
    return pairs[:limit]


def _scenario_pairs(replay: Replay, scenario: Scenario, seed: int, per_scenario: int, prefix_rate: float):
    rng = StableRng(f"hear2act_pairs/{seed}/{scenario.scenario_id}")
    env_seed = rng.below(_SEED_RANGE)
    options = [c.option_id for c in scenario.candidates if c.option_id != scenario.opening_option]

    prefix: tuple[str, ...] = ()
    if rng.random() < prefix_rate:
        for option in rng.shuffled(options):
            _, info = replay.play(scenario.scenario_id, None, env_seed, (recommend_reply(scenario, option),))
            if info["turn_record"]["reaction"] in _REJECTIONS:
                prefix, options = (recommend_reply(scenario, option),), [o for o in options if o != option]
                break

    assented = []
    for option in options:
        replies = (*prefix, recommend_reply(scenario, option))
        observation, info = replay.play(scenario.scenario_id, None, env_seed, replies)
        if info["turn_record"]["reaction"] == ReactionKind.SHARED_ASSENT.value:
            assented.append((option, replies, observation, info))

    pairs = []
    for option, replies, observation, info in rng.sample(assented, min(per_scenario, len(assented))):
        resolved = info["concern_state"] == ConcernState.GENUINE_ACCEPTANCE.value
        real = DecisionPoint(
            scenario.scenario_id, env_seed, replies, option, None, resolved,
            info["delivery_label"], observation["transcript"], replay.base.feedback.value,
        )  # fmt: skip
        twin = _twin_point(replay, scenario, real, rng)
        if twin is None:
            continue
        plus, minus = (real, twin) if resolved else (twin, real)
        pair_id = f"{scenario.scenario_id}/o{option}/t{len(replies)}"
        pairs.append(AssentPair(pair_id, plus, minus))
    return pairs


def _twin_point(replay: Replay, scenario: Scenario, real: DecisionPoint, rng: StableRng):
    choices = twin_concerns(scenario, real.option, resolved=not real.resolved)
    if not choices:
        return None
    l2, l3 = rng.choice(choices)
    domain = domain_by_id(scenario.domain)
    user = HiddenUser(
        l2, rng.choice(domain.dimension(l2).requirements), l3, rng.choice(domain.dimension(l3).requirements)
    )
    observation, info = replay.play(scenario.scenario_id, user, real.seed, real.replies)
    twin_state = ConcernState(info["concern_state"])
    if (
        observation["transcript"] != real.transcript
        or info["turn_record"]["reaction"] != ReactionKind.SHARED_ASSENT.value
        or twin_state.resolved == real.resolved
    ):
        return None  # the users' words differ before the decision point: no pair
    return DecisionPoint(
        real.scenario_id, real.seed, real.replies, real.option, user, twin_state.resolved,
        info["delivery_label"], observation["transcript"], real.feedback,
    )  # fmt: skip


# -- GRPO rows ---------------------------------------------------------------------------------
def pair_rows(
    pairs: list[AssentPair],
    access: str = "T+S^",
    state_inferrer=None,
    paired: bool = True,
    **env_options: Any,
) -> list[dict[str, Any]]:
    """GRPO rows (``agents.training_material.DecisionTask``'s schema), prompts from ``agents.hear2act.prompts.messages``
    on the env's observation under ``access``: ``"T+S^"`` needs ``state_inferrer`` (a
    ``StateInferrer``, e.g. ``agents.hear2act.audio_probe.ConcernInferrer``); ``"T+S"`` is the
    ground-truth reference. Paired: one row per pair (x+ in ``prompt``, x- in ``prompt_minus``);
    otherwise one ordinary row per side."""
    if access == "T+S^" and state_inferrer is None:
        raise ValueError(
            "access 'T+S^' needs state_inferrer=... (a StateInferrer such as "
            "agents.hear2act.audio_probe.ConcernInferrer); access 'T+S' is the ground-truth reference"
        )
    replay = Replay(access, state_inferrer, feedback=Feedback.PROSODY.value, **env_options)
    try:
        return replayed_rows(
            pairs, replay, lambda observation, item_id: messages(observation, "text"), paired
        )
    finally:
        replay.close()


def replayed_rows(
    pairs: list[AssentPair],
    replay: Replay,
    prompt: Callable[[dict[str, Any], str], Any],
    paired: bool = True,
) -> list[dict[str, Any]]:
    """``pair_rows``' rows with each side's prompt ``prompt(observation, item id)``, the
    observation being ``replay``'s at that side's decision point."""
    rows = []
    for pair in pairs:
        ids = {side: pair.item_id(side) for side in SIDES}
        prompts = {side: prompt(replay.to(point)[0], ids[side]) for side, point in pair.sides()}
        if paired:
            plus, minus = "resolved", "unresolved"
            rows.append(decision_row(prompts[plus], ids[plus], ITEM_FAMILY, prompts[minus], ids[minus]))
        else:
            rows.extend(decision_row(prompts[side], ids[side], ITEM_FAMILY) for side in SIDES)
    return rows


# -- the reward --------------------------------------------------------------------------------
# The env's own wording ("... doesn't work for you?") names an attribute in one domain
# (dog_training_classes: "work"), where its parser reads it as a targeted ask.
GENERAL_ASK = "[ACTION: ASK] Is there anything about this option that isn't right for you?"


def p6a_reply(index: int, scenario: Scenario) -> str:
    """A Discrete action as a P6a reply that the env's parser reads back as the same action."""
    domain = domain_by_id(scenario.domain)
    action = decode(index, domain, AssistantKind.TEXT)
    if not isinstance(action, AssistantAction):
        raise ValueError(f"action {index} is invalid here: {action.reason}")
    if action.kind is ActionKind.RECOMMEND:
        reply = recommend_reply(scenario, action.option)
    elif action.kind is ActionKind.ASK:
        label = action.attribute and domain.dimension(action.attribute).label
        reply = f"[ACTION: ASK] How important is {label} to you?" if label else GENERAL_ASK
    elif action.kind is ActionKind.CLARIFY:
        reply = "[ACTION: CLARIFY] Does this option fully work for you?"
    else:
        reply = "[ACTION: CONFIRM] Great, I'll confirm this option for you."
    if parse_p6a(reply, domain, AssistantKind.TEXT).action != action:
        raise RuntimeError(f"{reply!r} does not parse back as {action}")
    return reply


class AssentReward(DecisionReward):
    """The env's episode return for a reply at a pair's decision point (see module docstring)."""

    def __init__(
        self,
        pairs: list[AssentPair],
        eos_token_ids,
        reward: str = "tiered",
        turn_cost: float = 0.02,
        feedback: str = "prosody",
        **env_options: Any,
    ) -> None:
        super().__init__(eos_token_ids)
        self.points = {pair.item_id(side): point for pair in pairs for side, point in pair.sides()}
        wrong = {p.feedback for p in self.points.values()} - {Feedback(feedback).value}
        if wrong:
            raise ValueError(
                f"pairs built under {sorted(wrong)} feedback cannot be replayed under {feedback!r}"
            )
        self.replay = Replay(
            CONTINUATION_ACCESS, feedback=feedback, reward=reward, turn_cost=turn_cost, **env_options
        )
        self.agent = StateAwareAgent()

    def score(self, item_id: str, reply: str) -> tuple[float, bool]:
        """(episode return, whether the reply was a valid P6a action)."""
        observation, _ = self.replay.to(self.points[item_id])
        observation, _, terminated, truncated, info = self.replay.env.step(reply)
        valid = info["invalid_action"] is None
        self.agent.reset()
        while not (terminated or truncated):
            action = self.agent.act(observation)
            observation, _, terminated, truncated, info = self.replay.env.step(
                p6a_reply(action, self.replay.base.scenario)
            )
        return float(info["episode"]["return"]), valid

    def groups(self, item_id: str, item_family: str) -> tuple[str, ...]:
        return item_family, item_id.rsplit("/", 1)[-1]  # the family, and the side

    def close(self) -> None:
        self.replay.close()
