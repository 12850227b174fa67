"""``DialogueLLMAgent``: the P6a prompt as a multi-turn chat (``dialogue_messages``) -> a chat
model -> a P6a reply. The chat layout of ``training.llm.dialogue_grpo``'s multi-turn GRPO, so a
policy trained there is evaluated on the context it was trained on.

Stateless like ``LLMAgent``: the transcript in each observation is rebuilt into the chat every
turn. Transcript access (T) only; see ``agents.hear2act.dialogue_prompts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.hear2act.dialogue_prompts import dialogue_messages
from agents.llm.chat import ChatAgent
from agents.llm.clients import ChatClient


class DialogueLLMAgent(ChatAgent):
    required_access = ("T",)

    def __init__(self, client: ChatClient, assistant: str = "text") -> None:
        self.client, self.assistant = client, assistant

    def act_batch(self, observations: Sequence[dict[str, Any]]) -> list[str]:
        return self.client.complete([dialogue_messages(o, self.assistant) for o in observations])
