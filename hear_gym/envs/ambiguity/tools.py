"""Ambiguity's actions as named tools (``hear_gym.core.tools``): ``answer(option)`` names one of
the question's lettered options, ``reply(text)`` answers a multi-turn dialogue in words (matched
against the options by the rule judge, ``scoring.match_free_text``). Each call writes the env's
own text action; a letter the question lacks is the env's invalid answer, as for a text agent."""

from __future__ import annotations

from hear_gym.core.tools import ActionTool, ToolParam, ToolSet

INSTRUCTION = (
    "You hear what a speaker said and answer a question about what they meant. Call answer with the "
    "letter of the option you choose, or reply with your answer in words in a dialogue."
)


def _answer(env, option: str) -> str:
    return option


def _reply(env, text: str) -> str:
    return text


TOOLS = ToolSet(
    tools=(
        ActionTool(
            "answer",
            "Choose one of the question's options by its letter.",
            _answer,
            (ToolParam("option", str, "the option's letter: A, B, C or D"),),
        ),
        ActionTool(
            "reply",
            "Answer in your own words (multi-turn dialogues); matched against the options.",
            _reply,
            (ToolParam("text", str, "your answer"),),
        ),
    ),
    invalid_reply="",  # names no option: the invalid answer (a wrong, judged one in a dialogue)
    instruction=INSTRUCTION,
    text_access="T-nopunct",
    shown=("transcript", "question"),
)
