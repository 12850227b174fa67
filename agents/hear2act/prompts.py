"""The paper's prompt cards (Appendix G, decoded verbatim in the seed paper) as message builders.

* P6a: the shared decision prompt (system message), with ``{domain}`` and ``{options_text}``.
* P6b: the ground-truth concern-state channel (T+S).
* P6d: the second-stage input of the two-stage condition (T+S^): transcript plus inferred state.
* Generic affect (T+SER): the label is passed verbatim beside the transcript, in P6d's layout.

Text assistants also get CLARIFY; spoken assistants get exactly P6a.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.llm.parts import audio_part, text_part

P6A = """You are a task-oriented service assistant for {domain}.
Available options:
{options_text}

Your goal is to help the user reach the single option that best fits their needs based only on the information available in the conversation.

Choose exactly ONE action per turn and produce the corresponding assistant utterance:
- RECOMMEND: Recommend exactly one option that best fits the user's currently known needs.
- ASK: Ask one focused question that would help determine what the user needs.
- CONFIRM: Confirm the current option only when the user has clearly accepted it and no concern appears unresolved.{clarify_line}

Do not confirm an option while the user's response indicates that the current recommendation may still be unresolved. In that case, ask for the information needed to continue or recommend a better-fitting option.

Return the action and assistant utterance in one of the following forms:
[ACTION: RECOMMEND] [OPTION: <number>] <assistant utterance>
[ACTION: ASK] <assistant utterance>
[ACTION: CONFIRM] <assistant utterance>{clarify_form}"""

CLARIFY_LINE = "\n- CLARIFY: Ask the user whether the current option works for them."
CLARIFY_FORM = "\n[ACTION: CLARIFY] <assistant utterance>"

P6B = """CONCERN STATE: {state}
This tag describes the user's response to the current recommendation and indicates whether it should be treated as resolved or unresolved."""

P6D = """DIALOGUE TRANSCRIPT:
{transcript}

AUDIO-INFERRED STATE:
{inferred_state}"""

SER = """DIALOGUE TRANSCRIPT:
{transcript}

SPEECH EMOTION: {affect}"""


def system_prompt(observation: dict[str, Any], assistant: str = "text") -> str:
    text_assistant = assistant == "text"
    return P6A.format(
        domain=observation["domain"],
        options_text=observation["options"],
        clarify_line=CLARIFY_LINE if text_assistant else "",
        clarify_form=CLARIFY_FORM if text_assistant else "",
    )


def user_message(observation: dict[str, Any]) -> str:
    """The turn input under the observation's access condition."""
    transcript = observation["transcript"]
    if "inferred_state" in observation:
        return P6D.format(transcript=transcript, inferred_state=observation["inferred_state"])
    if "affect" in observation:
        return SER.format(transcript=transcript, affect=observation["affect"])
    if "concern_state" in observation:
        return f"{transcript}\n\n{P6B.format(state=observation['concern_state'])}"
    return transcript


def heard_audio(observation: dict[str, Any]) -> np.ndarray:
    """The current user turn's audio: the valid samples of the zero-padded buffer."""
    return observation["audio"][: int(observation["audio_length"][0])]


def audio_messages(observation: dict[str, Any], assistant: str = "spoken") -> list[dict[str, Any]]:
    """P6a plus the current user audio (its part carries the clip) and the transcript (A+T) or the
    assistant's side of it with the user's words replaced by ``[speech]`` (A)."""
    if "audio" not in observation:
        raise KeyError("the audio chat needs an audio condition (access 'A' or 'A+T')")
    content = [audio_part(heard_audio(observation)), text_part(observation["transcript"])]
    return [
        {"role": "system", "content": system_prompt(observation, assistant)},
        {"role": "user", "content": content},
    ]


def messages(observation: dict[str, Any], assistant: str = "text") -> list[dict[str, str]]:
    return [
        {"role": "system", "content": system_prompt(observation, assistant)},
        {"role": "user", "content": user_message(observation)},
    ]
