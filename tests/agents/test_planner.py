"""The planner is the reference for Hear2Act policies: no transcript agent in the project may
beat it, hearing the concern state must pay on top of it, and it must play from what it
observes only (its model of the user never loses the real user; twins of a scenario, who
differ only in what they hide, all get their own gold)."""

from functools import partial

import pytest

from agents.hear2act.baselines import (
    AskBeforeConfirmAgent,
    AskUntilDisclosedAgent,
    TranscriptOnlyAgent,
    reads_resolved,
)
from agents.hear2act.lexicon import DialogueView
from agents.hear2act.planner import PlannerAgent
from agents.hear2act.shortcuts import OptionListShortcutAgent
from agents.hear2act.user_model import GradedStateChannel, StateChannel, UserModel
from agents.random_agent import RandomAgent
from hear_gym.envs.hear2act.actions import RECOMMEND0
from hear_gym.envs.hear2act.family import cell, make, run_config
from hear_gym.envs.hear2act.metrics import METRICS_BY_NAME, scenario_sums
from hear_gym.envs.hear2act.scenarios.bank import get_scenario, scenarios_for
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id
from hear_gym.envs.hear2act.scenarios.twins import HiddenUser, consistent_pairs
from hear_gym.envs.hear2act.user.states import STATE_OF_LABEL, Feedback
from hear_gym.eval.pipeline import evaluate
from hear_gym.eval.results import read_results
from hear_gym.stats.bootstrap import contrast_ci

DEV = tuple(s.scenario_id for s in scenarios_for("dev"))
TURN_COSTS = (0.05, 0.10, 0.15)
TRANSCRIPT_AGENTS = {
    "transcript_only": TranscriptOnlyAgent,
    "ask_before_confirm": AskBeforeConfirmAgent,
    "ask_until_disclosed": AskUntilDisclosedAgent,
    "option_list_shortcut": OptionListShortcutAgent,
    "random": RandomAgent,
}


def returns_by_cell(folder):
    episodes: dict[str, list] = {}
    for record in read_results(folder / "results.jsonl"):
        episodes.setdefault(record["cell"].removesuffix("/prosody"), []).append(record)
    return {name: scenario_sums(eps, DEV, METRICS_BY_NAME["return"]) for name, eps in episodes.items()}


@pytest.fixture(scope="module")
def dev_returns(tmp_path_factory):
    """Turn cost -> cell -> per-scenario returns on the dev split, prosody-mediated feedback."""
    out = {}
    for turn_cost in TURN_COSTS:
        agents = {**TRANSCRIPT_AGENTS, "planner": partial(PlannerAgent, turn_cost=turn_cost)}
        cells = [cell(name, "T", "prosody") for name in agents]
        if turn_cost == 0.10:
            cells.append(cell("planner", "T+S", "prosody"))
        folder = tmp_path_factory.mktemp(f"cost{turn_cost}")
        evaluate(folder, run_config(cells, DEV, turn_cost=turn_cost), agents, progress=False)
        out[turn_cost] = returns_by_cell(folder)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("turn_cost", TURN_COSTS)
@pytest.mark.parametrize("other", sorted(TRANSCRIPT_AGENTS))
def test_no_transcript_agent_beats_the_planner(dev_returns, turn_cost, other):
    returns = dev_returns[turn_cost]
    gap = contrast_ci([(1.0, returns["planner@T"]), (-1.0, returns[f"{other}@T"])])
    assert gap.low >= 0, (other, turn_cost, gap)


@pytest.mark.slow
def test_the_ask_until_disclosed_reference_is_beaten_outright(dev_returns):
    for turn_cost in TURN_COSTS:
        returns = dev_returns[turn_cost]
        gap = contrast_ci([(1.0, returns["planner@T"]), (-1.0, returns["ask_until_disclosed@T"])])
        assert gap.low > 0, (turn_cost, gap)


@pytest.mark.slow
def test_hearing_the_concern_state_pays_on_top_of_the_planner(dev_returns):
    returns = dev_returns[0.10]
    gap = contrast_ci([(1.0, returns["planner@T+S"]), (-1.0, returns["planner@T"])])
    assert gap.low > 0, gap


def play(env, agent, seed: int, options: dict) -> tuple[list, dict]:
    """(observations with the action taken on each, the episode record)."""
    agent.reset(seed=seed)
    observation, _ = env.reset(seed=seed, options=options)
    steps = []
    while True:
        action = agent.act(observation)
        steps.append((observation, action))
        observation, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return steps, info["episode"]


READINGS = {  # how a channel reads the T+S tag
    "binary": (reads_resolved, StateChannel()),
    "graded": (STATE_OF_LABEL.__getitem__, GradedStateChannel()),
}


@pytest.mark.parametrize("feedback", ["prosody", "explicit"])
@pytest.mark.parametrize(("access", "reading"), [("T", None), ("T+S", "binary"), ("T+S", "graded")])
def test_the_model_never_loses_the_real_user(feedback, access, reading):
    """Under whatever a dialogue brings (random actions), the user the bank hides stays among the
    users the planner's model keeps, reading the words and, under T+S, the tag: as resolved or
    not, or as its graded state (which must follow the engine's rule table exactly, disclosure
    of L1 included, or some real user is lost)."""
    env = make(access=access, item_ids=DEV, feedback=feedback, max_turns=12)
    read, channel = READINGS.get(reading, (None, StateChannel()))
    for seed, scenario_id in enumerate(DEV):
        truth = tuple(c.attribute for c in get_scenario(scenario_id).concerns)
        steps, _ = play(env, RandomAgent(), seed, {"item_id": scenario_id})
        model = UserModel.from_observation(steps[0][0], Feedback(feedback))
        readings = {}
        for observation, _ in steps:
            if read is not None:
                readings[observation["turn"]] = read(observation["concern_state"])
            dialogue = DialogueView.parse(observation["transcript"], model.lexicon)
            weights = model.posterior(dialogue, readings, channel)
            kept = {user.levels for user, w in zip(model.users, weights, strict=True) if w > 0}
            assert truth in kept, (scenario_id, observation["turn"], observation["transcript"][-300:])


def twin_users(scenario_id: str) -> list[HiddenUser]:
    domain = domain_by_id(get_scenario(scenario_id).domain)
    return [
        HiddenUser(l2, domain.dimension(l2).requirements[0], l3, domain.dimension(l3).requirements[0])
        for l2, l3 in consistent_pairs(scenario_id)
    ]


@pytest.mark.parametrize("access", ["T", "T+S"])
def test_the_planner_finds_every_twin_users_gold_from_what_it_observes(access):
    """Twins share everything visible; a planner that read the bank's hidden user would miss
    the twins' golds, and one that read anything but the observations could act differently
    on twins whose dialogues have looked the same so far."""
    item_ids = DEV[:6]  # every twin user of 6 scenarios
    env = make(access=access, item_ids=item_ids, turn_cost=0.1)
    for seed, scenario_id in enumerate(item_ids):
        seen: dict[tuple, int] = {}  # the dialogue so far -> the action taken on it
        for user in twin_users(scenario_id):
            agent = PlannerAgent(turn_cost=0.1)
            steps, record = play(env, agent, seed, {"item_id": scenario_id, "hidden_user": user})
            assert record["success"], (scenario_id, user)
            history = ()
            for observation, action in steps:
                history += (observation["transcript"], observation.get("concern_state"))
                assert seen.setdefault(history, action) == action, (scenario_id, user)


def test_a_planner_assuming_prosody_reads_explicit_feedback_from_the_words():
    """The env's feedback is not in the observation; the words of the first recommendation of
    an option meeting L1 tell, and the planner reads the dialogue again under it."""
    env = make(access="T", item_ids=DEV[:12], feedback="explicit", turn_cost=0.1)
    for seed, scenario_id in enumerate(DEV[:12]):
        _, record = play(env, PlannerAgent(turn_cost=0.1, feedback="prosody"), seed, {"item_id": scenario_id})
        assert record["success"], scenario_id


def test_the_planner_plans_at_the_turn_cost_the_run_sets(tmp_path):
    """Built without arguments (as ``hear-gym eval`` builds agents), the planner gets the cell's
    env kwargs from the runner (``configure``) and plays as one built with the run's turn cost;
    at that cost it plays differently from a planner at no cost."""
    item_ids = DEV[:12]
    costly = 0.6
    agents = {"planner": PlannerAgent, "planner_built": partial(PlannerAgent, turn_cost=costly)}
    cells = [cell("planner", "T", "prosody"), cell("planner_built", "T", "prosody")]
    evaluate(tmp_path / "costly", run_config(cells, item_ids, turn_cost=costly), agents, progress=False)
    evaluate(tmp_path / "free", run_config(cells[:1], item_ids), agents, progress=False)

    def dialogues(folder, agent):
        records = sorted(read_results(folder / "results.jsonl"), key=lambda r: r["item_id"])
        return [(r["item_id"], r["turns"]) for r in records if r["agent"] == agent]

    configured = dialogues(tmp_path / "costly", "planner")
    assert configured == dialogues(tmp_path / "costly", "planner_built")
    assert configured != dialogues(tmp_path / "free", "planner")


def test_same_seed_same_dialogue():
    env = make(access="T+S", item_ids=DEV[:8], turn_cost=0.05)
    for seed, scenario_id in enumerate(DEV[:8]):
        runs = [play(env, PlannerAgent(turn_cost=0.05), seed, {"item_id": scenario_id}) for _ in range(2)]
        assert runs[0][1] == runs[1][1]
        assert [a for _, a in runs[0][0]] == [a for _, a in runs[1][0]]


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"turn_cost": -0.1}, "turn_cost"),
        ({"reward": "dense"}, "reward"),
        ({"feedback": "loud"}, "feedback"),
        ({"max_turns": 0}, "max_turns"),
        ({"state_recall": 1.5}, "recall"),
    ],
)
def test_bad_options_are_named(kwargs, named):
    with pytest.raises(ValueError, match=named):
        PlannerAgent(**kwargs)


class _HearsNothingGenuine:
    """A T+S^ inferrer that always writes the unresolved sentence (a deaf probe)."""

    def infer(self, waveform, sample_rate, transcript, reference) -> str:
        return "The user sounds unconvinced; the recommendation seems unresolved."


def test_a_noisy_listener_plans_on_the_words_and_never_recommends_its_option_again():
    """Under a noisy channel (a probe's rates) the readings so far weigh the belief, but the
    lookahead takes no future reading: planning on exact future readings makes the planner
    recommend the option it is on again, to hear it once more (the planner's docstring)."""
    env = make(access="T+S^", state_inferrer=_HearsNothingGenuine(), item_ids=DEV[:4], turn_cost=0.1)
    for seed, scenario_id in enumerate(DEV[:4]):
        agent = PlannerAgent(turn_cost=0.1, state_recall=0.5, state_false_resolved=0.02)
        agent.reset(seed)
        observation, _ = env.reset(seed=seed, options={"item_id": scenario_id})
        done = False
        while not done:
            action = agent.act(observation)
            again = RECOMMEND0 + int(observation["current_option"]) - 1
            assert action != again, (scenario_id, observation["turn"])
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        assert info["episode"]["success"], scenario_id
