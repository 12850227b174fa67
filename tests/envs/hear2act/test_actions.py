import pytest

from hear_gym.envs.hear2act.actions import (
    CLARIFY,
    N_ACTIONS,
    AssistantKind,
    InvalidAction,
    action_mask,
    ask_target,
    decode,
    encode,
    parse_p6a,
    utterance,
)
from hear_gym.envs.hear2act.scenario_facts import INVALID_TEXT, ScenarioFacts
from hear_gym.envs.hear2act.scenarios.domain_schema import domain_by_id, load_domains
from hear_gym.envs.hear2act.user.engine import ActionKind, AssistantAction
from hear_gym.envs.hear2act.user.states import Feedback

AIRLINE = domain_by_id("budget_airline_tickets")


@pytest.mark.parametrize("domain", load_domains()[::7], ids=lambda d: d.domain_id)
def test_decode_encode_round_trip(domain):
    mask = action_mask(domain, AssistantKind.TEXT)
    for index in range(N_ACTIONS):
        action = decode(index, domain, AssistantKind.TEXT)
        assert isinstance(action, InvalidAction) == (mask[index] == 0)
        if not isinstance(action, InvalidAction):
            assert encode(action, domain) == index
    with pytest.raises(ValueError):
        decode(N_ACTIONS, domain, AssistantKind.TEXT)


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "[ACTION: RECOMMEND] [OPTION: 3] I'd go with this.",
            AssistantAction(ActionKind.RECOMMEND, option=3),
        ),
        ("  [action: confirm] Done.", AssistantAction(ActionKind.CONFIRM)),
        ("[ACTION:ASK] Anything else?", AssistantAction(ActionKind.ASK)),
        (
            "[ACTION: ASK] How much luggage will you bring?",
            AssistantAction(ActionKind.ASK, attribute="baggage"),
        ),
        ("[ACTION: CLARIFY] Does it work?", AssistantAction(ActionKind.CLARIFY)),
        ("[action: recommend] [option: 3] lower case tags", AssistantAction(ActionKind.RECOMMEND, option=3)),
    ],
)
def test_p6a_valid(text, expected):
    assert parse_p6a(text, AIRLINE, AssistantKind.TEXT).action == expected


@pytest.mark.parametrize(
    "text,reason",
    [
        ("Option 3 please", "does not start with"),
        ("[ACTION: RECOMMEND] Option 3", "must be followed by [OPTION"),
        ("[ACTION: RECOMMEND] [OPTION: 12] x", "not in 1..11"),
        ("[ACTION: RECOMMEND] [OPTION: 0] x", "not in 1..11"),
        ("[ACTION: ASK] hi [ACTION: CONFIRM] ok", "more than one"),
        ("[ACTION: RECOMMEND] [OPTION: 2] [OPTION: 3]", "more than one"),
        ("[ACTION: BOOK] now", "does not start with"),
        ("[ACTION: RECOMMEND] [OPTION: \u0663] Arabic-Indic three", "must be followed by [OPTION"),
        ("[ACTION: RECOMMEND] [OPTION: \uff13] full-width three", "must be followed by [OPTION"),
        ("", "does not start with"),
    ],
)
def test_p6a_malformed(text, reason):
    action = parse_p6a(text, AIRLINE, AssistantKind.TEXT).action
    assert isinstance(action, InvalidAction) and reason in action.reason


def test_spoken_assistants_cannot_clarify():
    action = parse_p6a("[ACTION: CLARIFY] ok?", AIRLINE, AssistantKind.SPOKEN).action
    assert isinstance(action, InvalidAction) and "spoken" in action.reason
    assert action_mask(AIRLINE, AssistantKind.SPOKEN)[CLARIFY] == 0


def test_ask_target_needs_exactly_one_attribute():
    assert ask_target("What about your baggage and seat comfort?", AIRLINE) is None
    assert ask_target("Anything else I should know?", AIRLINE) is None
    assert ask_target("Is reliability important?", AIRLINE) == "on_time_record"


def test_the_env_s_own_replies_parse_back_to_their_actions(bank):
    """What the env writes for a Discrete ask (the text demonstrations copy it) must mean that ask
    when a text agent writes it: the general question names no attribute in any domain."""
    import gymnasium as gym

    from hear_gym.envs.hear2act.actions import ASK_GENERAL, ASK_SLOT0

    env = gym.make("hear_gym/Hear2Act-v0", split="all", disable_env_checker=True)
    first_of_domain = {s.domain: s.scenario_id for s in reversed(bank)}
    for domain_id, scenario_id in sorted(first_of_domain.items()):
        domain = domain_by_id(domain_id)
        asks = [(ASK_GENERAL, None)] + [
            (ASK_SLOT0 + i, d.key) for i, d in enumerate(domain.concern_dimensions)
        ]
        for index, attribute in asks:
            env.reset(seed=0, options={"item_id": scenario_id})
            text = env.step(index)[4]["turn_record"]["assistant_text"]
            parsed = parse_p6a(text, domain, AssistantKind.TEXT).action
            assert parsed == AssistantAction(ActionKind.ASK, attribute=attribute), (domain_id, text)


def test_a_scenarios_moves_are_each_actions_decoding_and_words(bank):
    """The env plays a Discrete action from its scenario's table (``Facts.moves``): each entry is
    the action ``decode`` gives and the words ``utterance`` writes, for both assistant kinds."""
    first_of_domain = {s.domain: s for s in reversed(bank)}
    for assistant in AssistantKind:
        facts = ScenarioFacts(Feedback.PROSODY, None, assistant)
        for domain_id, scenario in sorted(first_of_domain.items()):
            domain, kept = domain_by_id(domain_id), facts(scenario)
            for index in range(N_ACTIONS):
                action = decode(index, domain, assistant)
                assert kept.moves[index].action == action
                if isinstance(action, InvalidAction):
                    assert kept.moves[index].text == INVALID_TEXT
                elif action.kind is ActionKind.CONFIRM:  # its words name the option current then
                    assert kept.moves[index].text is None
                    assert [
                        utterance(action, scenario, domain, c.option_id) for c in scenario.candidates
                    ] == list(kept.confirm_texts[1:])
                else:
                    assert kept.moves[index].text == utterance(action, scenario, domain)
