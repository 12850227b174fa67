"""Ambiguity's judges: the offline rule, the LLM judge's prompt and verdict parsing (with a mock
client), re-scoring free-text dialogue records and the agreement between two judges."""

import gymnasium as gym
import pytest

from agents.ambiguity.judge import JUDGE_PROMPT, LLMJudge, RuleJudge, Verdict, agreement, judge_records
from agents.llm.clients import MockChatClient
from hear_gym.envs.ambiguity.items.generator import episodes_by_id, item_ids

OPTIONS = ("the lamp", "the chair")


@pytest.mark.parametrize(
    "reply,correct",
    [
        ("The lamp, I think.", True),
        ("B", False),
        ("the chair", False),
        ("either the lamp or the chair", False),
        ("no idea", False),
    ],
)
def test_the_rule_judge_needs_the_reference_and_nothing_else(reply, correct):
    assert RuleJudge().judge("Which one can I afford?", OPTIONS, 0, reply) == Verdict(correct)


def test_the_llm_judge_asks_in_steps_and_reads_the_last_line():
    seen = []

    def reply(messages):
        seen.append(messages[-1]["content"])
        return "The response names the lamp, like the reference.\nCorrect"

    verdict = LLMJudge(MockChatClient(reply)).judge("Which one can I afford?", OPTIONS, 0, "the lamp")
    assert verdict == Verdict(True)
    prompt = seen[0]
    assert "Reference answer: the lamp" in prompt and "Model response: the lamp" in prompt
    assert all(f"Step {k}" in prompt for k in (1, 2, 3))
    assert prompt.startswith(JUDGE_PROMPT.split("\n")[0])
    unparsed = LLMJudge(MockChatClient(lambda m: "It is probably right.")).judge("q", OPTIONS, 0, "the lamp")
    assert unparsed == Verdict(False, parsed=False)
    assert LLMJudge(MockChatClient(lambda m: "...\n**Incorrect**")).judge("q", OPTIONS, 0, "x") == Verdict(
        False
    )


def test_dialogue_records_are_rejudged_and_judges_compared():
    dialogues = [e for e in item_ids("test") if e.startswith("multi_turn-en")][:6]
    env = gym.make("hear_gym/Ambiguity-v0", access="T", actions="text", item_ids=dialogues)
    records = []
    for k, episode_id in enumerate(dialogues):
        env.reset(options={"item_id": episode_id})
        for turn in episodes_by_id()[episode_id].turns:
            right = turn.asked.options[turn.asked.answer]
            wrong = turn.asked.options[1 - turn.asked.answer]
            info = env.step(f"I would say {right if k % 2 == 0 else wrong}")[4]
        records.append(info["episode"])
    rule = judge_records(records, RuleJudge())
    assert [v.correct for v in rule] == [r["success"] for r in records] == [k % 2 == 0 for k in range(6)]
    always_yes = judge_records(records, LLMJudge(MockChatClient(lambda m: "Correct")))
    stats = agreement(rule, always_yes)
    assert (
        stats["n"] == 6 and stats["agreement"] == pytest.approx(0.5) and stats["kappa"] == pytest.approx(0.0)
    )
    assert agreement(rule, rule)["kappa"] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        agreement(rule, rule[:2])
