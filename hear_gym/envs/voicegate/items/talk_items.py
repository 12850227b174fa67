"""Side-talk and self-talk items (rules: ``generator.py``)."""

from __future__ import annotations

from collections.abc import Iterator

from hear_gym.core.stable_rng import StableRng
from hear_gym.envs.voicegate.items.model import (
    Addressee,
    Family,
    Item,
    Placement,
    Segment,
    Source,
    Target,
    TargetKind,
    Utterance,
)
from hear_gym.envs.voicegate.items.pools import SELF_TALK_FRAMES, TOOL_NAMES, Phrasing, phrasing, tool
from hear_gym.envs.voicegate.items.rules import (
    COMPANION_COMMA_SHARE,
    GENERATOR_VERSION,
    JOINED_GAP_MS,
    MAX_ATTEMPTS,
    SELF_TALK_ITEMS,
    SIDE_TALK_CONFIGS,
    SIDE_TALK_EXTRA,
    SIDE_TALK_ITEMS,
    SPLIT_VOICES,
    command,
    commas,
    content_words,
    fill,
    lower_first,
    n_test,
    split_of,
    spoken_length,
)


def _side_utterance(
    content: str,
    addressee: Addressee,
    opener: str | None,
    ph: Phrasing,
    rng: StableRng,
    avoid: Utterance | None,
) -> Utterance:
    for _ in range(MAX_ATTEMPTS):
        if content == "tool":
            utterance = command(tool(rng.choice(TOOL_NAMES)), ph, rng, addressee)
            clash = avoid is not None and avoid.tool == utterance.tool
        else:
            question = rng.choice(ph.questions)
            utterance = Utterance(question.text, addressee, topic_words=tuple(question.topic_words))
            # by topic, not text: the other utterance may carry an opener ("So, how long ...")
            clash = avoid is not None and avoid.topic_words == utterance.topic_words
        if not clash:
            break
    if opener is not None:
        utterance = Utterance(
            f"{opener}, {lower_first(utterance.text)}",
            addressee,
            utterance.tool,
            utterance.params,
            utterance.topic_words,
        )
    return utterance


def side_talk_counts() -> tuple[int, ...]:
    base, extra = divmod(SIDE_TALK_ITEMS, len(SIDE_TALK_CONFIGS))
    if len(SIDE_TALK_EXTRA) != extra:
        raise RuntimeError(f"{SIDE_TALK_ITEMS} side-talk items need {extra} extra configurations")
    return tuple(base + (c in SIDE_TALK_EXTRA) for c in range(len(SIDE_TALK_CONFIGS)))


def side_talk_items(side_talk_cue: str) -> Iterator[Item]:
    ph = phrasing()
    bystander_placement = Placement.TURNED_AWAY if side_talk_cue == "turned_away" else Placement.NEAR
    first = 0  # running index over the family: every other item carries a vocative
    for c, (config, n) in enumerate(zip(SIDE_TALK_CONFIGS, side_talk_counts(), strict=True)):
        order, assistant_content, bystander_content = config.split("-")
        rng = StableRng(f"{GENERATOR_VERSION}|side_talk|{config}")
        with_vocative = [(first + k) % 2 == 0 for k in range(n)]
        half = n_test(n) // 2
        test = set(rng.sample([k for k in range(n) if with_vocative[k]], half)) | set(
            rng.sample([k for k in range(n) if not with_vocative[k]], half)
        )
        for k in range(n):
            vocative = rng.choice(ph.vocatives) if with_vocative[k] else None
            # the other utterance opens too (a discourse marker), so the name is a lexical cue
            # while its length and comma pause are no acoustic one
            marker = rng.choice(ph.openers) if with_vocative[k] else None
            to_assistant = _side_utterance(assistant_content, Addressee.ASSISTANT, marker, ph, rng, None)
            to_bystander = _side_utterance(
                bystander_content, Addressee.BYSTANDER, vocative, ph, rng, to_assistant
            )
            utterances = (
                (to_assistant, to_bystander) if order == "assistant_first" else (to_bystander, to_assistant)
            )
            split = split_of(k, test)
            voice = rng.choice(SPLIT_VOICES[split])
            segments = tuple(
                Segment(
                    i,
                    Source.WEARER,
                    voice,
                    Placement.NEAR if u.addressee is Addressee.ASSISTANT else bystander_placement,
                )
                for i, u in enumerate(utterances)
            )
            position = utterances.index(to_assistant)
            target = (
                Target(TargetKind.TOOL, tool=to_assistant.tool)
                if assistant_content == "tool"
                else Target(TargetKind.ANSWER, utterance=position)
            )
            group = f"st-{c}-{k:02d}"
            yield Item(
                group,
                Family.SIDE_TALK,
                config,
                split,
                group,
                utterances,
                segments,
                (JOINED_GAP_MS,),
                target,
                {"vocative": vocative is not None, "acoustic": side_talk_cue},
            )
        first += n


# -- self-talk ------------------------------------------------------------------------------
def self_talk_counts() -> tuple[int, ...]:
    base, extra = divmod(SELF_TALK_ITEMS, len(SELF_TALK_FRAMES))
    return tuple(base + (f < extra) for f in range(len(SELF_TALK_FRAMES)))


def _companion(
    frame_text: str, tool_name: str, target_length: int, with_comma: bool, ph: Phrasing, rng: StableRng
) -> str:
    """The monologue's other sentence: one of the tool's contexts or a self-directed aside, with
    a comma or without (``with_comma``), the one that brings the input's spoken length
    (``spoken_length``) nearest ``target_length``, an act input's; ties drawn at random."""
    room = target_length - spoken_length(frame_text) - 1
    candidates = [t for t in (*tool(tool_name).contexts, *ph.asides) if (commas(t) > 0) == with_comma]
    return min(rng.sample(candidates, len(candidates)), key=lambda text: abs(spoken_length(text) - room))


def self_talk_items(act_lengths: dict[str, tuple[int, ...]]) -> Iterator[Item]:
    """``act_lengths``: per split, the spoken lengths of the act inputs with audio, which the
    two-sentence monologues match."""
    ph = phrasing()
    for f, (frame, n) in enumerate(zip(SELF_TALK_FRAMES, self_talk_counts(), strict=True)):
        rng = StableRng(f"{GENERATOR_VERSION}|self_talk|{frame}")
        if frame == "metaphor":
            lines = rng.sample(ph.metaphors, n)
            utterances = [
                Utterance(m.text, Addressee.SELF, m.tool, None, content_words(m.text)) for m in lines
            ]
        else:
            utterances, seen = [], set()
            for _ in range(MAX_ATTEMPTS):
                if len(utterances) == n:
                    break
                tool_ = tool(TOOL_NAMES[len(utterances) % len(TOOL_NAMES)])
                core, filled = fill(rng.choice(tool_.cores), tool_, rng)
                text = rng.choice(ph.self_talk[frame]).replace("{core}", core)
                if text not in seen:
                    seen.add(text)
                    utterances.append(
                        Utterance(
                            text, Addressee.SELF, tool_.name, tool_.call_params(filled), content_words(core)
                        )
                    )
        test = set(rng.sample(range(n), n_test(n)))
        seen_in = {"train": 0, "test": 0}  # voices rotate within each split, offset by frame
        for k, utterance in enumerate(utterances):
            group = f"sf-{frame}-{k:02d}"
            split = split_of(k, test)
            voices = SPLIT_VOICES[split]
            voice = voices[(seen_in[split] + f) % len(voices)]
            seen_in[split] += 1
            aside = Utterance(
                _companion(
                    utterance.text,
                    utterance.tool,
                    rng.choice(act_lengths[split]),
                    (rng.random() < COMPANION_COMMA_SHARE) and commas(utterance.text) > 0,
                    ph,
                    rng,
                ),
                Addressee.SELF,
            )
            # the other sentence precedes the frame in even items, follows it in odd ones
            pair = (aside, utterance) if k % 2 == 0 else (utterance, aside)
            yield Item(
                group,
                Family.SELF_TALK,
                frame,
                split,
                group,
                pair,
                tuple(Segment(i, Source.WEARER, voice, Placement.NEAR) for i in range(2)),
                (JOINED_GAP_MS,),
                Target(TargetKind.MUTE),
                {"companion": "before" if k % 2 == 0 else "after"},
            )
