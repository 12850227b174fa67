"""An LLM side-talk judge for VoiceGate (the paper uses a fixed Qwen3.5 judge).

It implements ``hear_gym.envs.voicegate.scoring.Judge``: the model sees both utterances with
their addressees and the agent's answer, and must reply with exactly one of the four labels.
The reply is parsed strictly; anything else raises, because a judge that guesses would
silently change scores.
"""

from __future__ import annotations

from agents.llm.clients import ChatClient
from hear_gym.envs.voicegate.items.model import Item
from hear_gym.envs.voicegate.scoring import JudgeLabel

JUDGE_PROMPT = """You judge a voice assistant. A user said two things; one was addressed to the assistant, one to another person.
Utterance to the assistant: "{assistant}"
Utterance to the other person: "{bystander}"
The assistant replied: "{answer}"
Which utterance does the reply respond to? Reply with exactly one word: assistant, bystander, both, or neither."""


class JudgeError(ValueError):
    """The judge model did not reply with one of the four labels."""


class LLMJudge:
    def __init__(self, client: ChatClient, name: str = "llm-judge") -> None:
        self.client, self.name = client, name

    def label(self, item: Item, answer: str) -> JudgeLabel:
        by_addressee = {u.addressee.value: u.text for u in item.utterances}
        prompt = JUDGE_PROMPT.format(
            assistant=by_addressee.get("assistant", ""),
            bystander=by_addressee.get("bystander", ""),
            answer=answer,
        )
        reply = self.client.complete([[{"role": "user", "content": prompt}]])[0].strip().lower().rstrip(".")
        try:
            return JudgeLabel(reply)
        except ValueError:
            raise JudgeError(
                f"judge replied {reply!r}; expected one of {[label.value for label in JudgeLabel]}"
            ) from None
