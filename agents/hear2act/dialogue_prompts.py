"""The P6a prompt as a chat: one message per dialogue turn, so a whole dialogue is one
append-only token sequence (multi-turn training, KV-cache reuse).

``prompts.messages`` puts the whole transcript into ONE user message, rewritten every turn.
``dialogue_messages`` splits the same transcript into alternating turns instead: the P6a system
prompt, then each ``User: ...`` line as a ``user`` message and each ``Assistant: ...`` line as an
``assistant`` message carrying exactly the text the env recorded (the standardized opening
included). For consecutive observations of one episode, step t+1's messages are step t's plus
``[assistant reply, user answer]``.

Access: T (transcript) only. A state channel (``concern_state``, ``inferred_state``, ``affect``)
describes only the latest user turn and is replaced every turn, and audio is the current turn's
clip, so neither fits an append-only history: such observations are refused with ``ValueError``.
(Appending each turn's tag to its user message would be append-only, but it is not the paper's
P6b/P6d layout; not done here.)

The env folds a reply into one transcript line (``to_charset``: line breaks become spaces,
non-ASCII punctuation is folded, longer than ``MAX_ASSISTANT_CHARS`` is cut; an empty reply is
recorded as ``[empty]``), so an assistant message is what the env recorded, which can differ
from the raw text a model generated.
"""

from __future__ import annotations

from typing import Any

from agents.hear2act.prompts import system_prompt

USER_PREFIX = "User: "
ASSISTANT_PREFIX = "Assistant: "
ROLES = ((USER_PREFIX, "user"), (ASSISTANT_PREFIX, "assistant"))
CHANNEL_KEYS = ("concern_state", "inferred_state", "affect")
AUDIO_KEYS = ("audio", "audio_length")


def check_transcript_access(observation: dict[str, Any]) -> None:
    """Raise ``ValueError`` unless the observation is a transcript-only (T) one."""
    channels = [k for k in CHANNEL_KEYS if k in observation]
    if channels:
        raise ValueError(
            f"dialogue_messages takes access 'T' only; this observation carries the per-turn state "
            f"channel {channels}, which describes only the latest user turn and is replaced every turn, "
            "so it cannot be an append-only chat history (use agents.hear2act.prompts.messages for T+S, "
            "T+S^ and T+SER)"
        )
    audio = [k for k in AUDIO_KEYS if k in observation]
    if audio:
        raise ValueError(
            f"dialogue_messages takes access 'T' only; this observation carries audio {audio} of the "
            "current user turn, which is not an append-only chat history (use "
            "agents.hear2act.prompts.audio_messages for A and A+T)"
        )


def transcript_turns(transcript: str) -> list[dict[str, str]]:
    """``User: ...`` / ``Assistant: ...`` lines -> chat messages (one per line; the env writes
    every utterance on one line)."""
    turns = []
    for number, line in enumerate(transcript.split("\n"), start=1):
        for prefix, role in ROLES:
            if line.startswith(prefix):
                turns.append({"role": role, "content": line[len(prefix) :]})
                break
        else:
            raise ValueError(
                f"transcript line {number} starts with neither {USER_PREFIX!r} nor "
                f"{ASSISTANT_PREFIX!r}: {line[:80]!r}"
            )
    for previous, current in zip(turns, turns[1:], strict=False):
        if previous["role"] == current["role"]:
            raise ValueError(
                f"transcript has two {current['role']} turns in a row; expected alternating turns"
            )
    return turns


def dialogue_messages(observation: dict[str, Any], assistant: str = "text") -> list[dict[str, str]]:
    """The P6a system prompt, then the dialogue so far as alternating user/assistant messages
    (the last is the user's latest turn)."""
    check_transcript_access(observation)
    turns = transcript_turns(observation["transcript"])
    if not turns or turns[0]["role"] != "user" or turns[-1]["role"] != "user":
        raise ValueError("a Hear2Act transcript starts and ends with a user turn")
    return [{"role": "system", "content": system_prompt(observation, assistant)}, *turns]
