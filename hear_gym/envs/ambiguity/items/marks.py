"""A compact way to write a ``SpokenReading``: the words with their prosody marked inline.

* ``|`` after a token: a pause (``"Let's eat | grandma"``, ``"咬死了|猎人的狗"``);
* ``*token*``: contrastive stress (``"the *green* house"``);
* ``字[pinyin]`` (Mandarin): the character's tone-numbered pronunciation (``"看[kan1]孩子"``).

Tokens are words in English and characters in Mandarin, as ``spoken.tokenize`` counts them.
"""

from __future__ import annotations

import re

from hear_gym.envs.ambiguity.spoken import SpokenReading

_ZH_TOKEN = re.compile(r"\||\*(.)\*|(.)\[([a-z:ü]+[1-5])\]|(\S)")


def reading(template: str, language: str, contour: str = "fall") -> SpokenReading:
    tokens: list[str] = []
    pauses: list[int] = []
    stress: list[int] = []
    pronounce: list[tuple[int, str]] = []
    if language == "en":
        for word in template.split():
            if word == "|":
                pauses.append(len(tokens) - 1)
            elif len(word) > 2 and word.startswith("*") and word.endswith("*"):
                stress.append(len(tokens))
                tokens.append(word[1:-1])
            else:
                tokens.append(word)
        text = " ".join(tokens)
    else:
        for match in _ZH_TOKEN.finditer(template):
            stressed, toned, pinyin, plain = match.groups()
            if match.group(0) == "|":
                pauses.append(len(tokens) - 1)
            elif stressed:
                stress.append(len(tokens))
                tokens.append(stressed)
            elif toned:
                pronounce.append((len(tokens), pinyin))
                tokens.append(toned)
            else:
                tokens.append(plain)
        text = "".join(tokens)
    return SpokenReading(
        text=text,
        language=language,
        pause_after=tuple(pauses),
        stress=tuple(stress),
        contour=contour,
        pronounce=tuple(pronounce),
    )
