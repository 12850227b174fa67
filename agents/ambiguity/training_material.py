"""What Ambiguity gives the trainers (``agents.training_material``): its text chat agent, its gold
letters as SFT demonstrations under T-nopunct, the ``ambiguity`` GRPO task (``grpo_items``; paired
over minimal pairs) and the text its models read (the tiny models' corpus). PPO uses the shared
``mlp`` policy on the env's feature observation."""

from __future__ import annotations

from agents.ambiguity import grpo_items
from agents.ambiguity.demos import DEMO_ACCESS, ambiguity_demos
from agents.ambiguity.llm import AMBIGUITY_INSTRUCTION, AmbiguityChatAgent
from agents.training_material import DecisionTask, DemoSource, TrainingMaterial


def instructions() -> list[str]:
    return [AMBIGUITY_INSTRUCTION]


def corpus(max_episodes: int = 600) -> list[str]:
    """The instruction, and the prompts, options and words of a spread of episodes."""
    from hear_gym.envs.ambiguity.actions import LETTERS, format_options
    from hear_gym.envs.ambiguity.items.generator import all_episodes

    episodes = all_episodes()
    texts = [*instructions(), *LETTERS]
    for episode in episodes[:: max(1, len(episodes) // max_episodes)]:
        for turn in episode.turns:
            texts.append(turn.asked.prompt + "\n" + format_options(turn.asked.options))
            texts += [u.written for u in turn.said]
    return texts


MATERIAL = TrainingMaterial(
    chat_agent=AmbiguityChatAgent,
    demos=DemoSource(ambiguity_demos, DEMO_ACCESS),
    grpo_tasks={
        "ambiguity": DecisionTask(
            check=grpo_items.check,
            access=lambda settings: grpo_items.TRAIN_ACCESS,
            build=grpo_items.build,
            eval_options=lambda options: {},
        )
    },
    corpus=corpus,
    instructions=instructions,
)
