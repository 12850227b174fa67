"""Detection controls as long as their items: a variant pair (with the phenomenon, without it) of
close length whose longer side is drawn, so that neither a clip's length nor its token count
tells a detection item from its control."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product

from hear_gym.core.stable_rng import StableRng


def spoken_length(text: str) -> int:
    """Letters and digits (English) or characters (Mandarin, one syllable each): a proxy for how
    long the text takes to say."""
    return sum(ch.isalnum() for ch in text)


def matched(
    key: str, with_it: Sequence[str], without_it: Sequence[str], size: Callable[[str], int] = spoken_length
) -> tuple[str, str]:
    """(one of ``with_it``, one of ``without_it``) of close sizes, the control the longer or the
    shorter one (drawn): a drawn ``with_it`` and the nearest control on the drawn side, else the
    nearest pair on that side, else the nearest pair."""
    rng = StableRng(f"ambiguity/length-match/{key}")
    mine = rng.choice(with_it)
    sign = 1 if rng.below(2) else -1
    pairs = list(product(with_it, without_it))
    candidates = (
        [(mine, c) for c in without_it if (size(c) - size(mine)) * sign > 0]
        or [(w, c) for w, c in pairs if (size(c) - size(w)) * sign > 0]
        or pairs
    )
    best = min(abs(size(c) - size(w)) for w, c in candidates)
    return rng.choice([(w, c) for w, c in candidates if abs(size(c) - size(w)) == best])
