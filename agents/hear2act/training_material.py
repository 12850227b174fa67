"""What Hear2Act gives the trainers (``agents.training_material``): its text chat agent, the
state-aware agent's decisions as SFT demonstrations under T+S, the ``hear2act_assent`` GRPO task
(``assent_pairs``: one transcript at an assent turn, genuine vs reluctant acceptance, through the
ground-truth T+S channel or, given ``state_probe``, through T+S^: the sentence a concern probe
writes from each side's audio; the held-out evaluation then runs under T+S^ with the same
probe), the ``hear2act_dialogue`` multi-turn task (``dialogue_task``: whole dialogues under T;
``hear2act_dialogue_state`` under T+S through the tools), the state-aware agent's whole dialogues
as tool-calling chats (``tool_demos``, the SFT start of dialogue GRPO),
and its PPO policy networks (``option_policy``); for audio-language models under A+T, its audio
chat agent and the ``hear2act_assent`` audio task (``audio_assent``: the pairs' sides differ in
the audio of the assent turn alone)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.audio_material import AudioDecisionTask
from agents.hear2act.concern_state import PRIVILEGED_CONCERN
from agents.hear2act.demos import DEMO_ACCESS, hear2act_demos
from agents.hear2act.dialogue_task import DIALOGUE, DIALOGUE_STATE
from agents.hear2act.llm import AudioLLMAgent, LLMAgent
from agents.hear2act.tool_demos import TOOL_DEMO_ACCESS, hear2act_tool_demos
from agents.training_material import DecisionTask, DemoSource, PPOPolicy, TrainingMaterial


# -- the assent task ---------------------------------------------------------------------------
def with_probe_audio(state_probe: str, env_options: dict[str, Any]) -> dict[str, Any]:
    """``env_options`` with the renderer and plan table the probe was trained on (a probe hears
    only the audio it was trained on); refuses others."""
    from agents.hear2act.audio_probe import AudioProbe

    if not Path(state_probe).is_file():
        raise ValueError(f"no probe checkpoint at {state_probe}")
    config = AudioProbe.load(state_probe).config
    if config.task != "concern":
        raise ValueError(f"{state_probe} is a {config.task} probe; T+S^ needs a concern probe")
    audio = {"renderer": config.renderer, "prosody": config.prosody}
    clash = {k: env_options[k] for k in audio if k in env_options and env_options[k] != audio[k]}
    if clash:
        raise ValueError(f"{state_probe} was trained on {audio}; the env options say {clash}")
    return {**env_options, **audio}


def check_assent(settings) -> dict[str, Any]:
    _refuse_item_families(settings)
    if settings.state_probe is None:
        return dict(settings.env_options)
    return with_probe_audio(str(settings.state_probe), settings.env_options)


def check_audio_assent(settings) -> dict[str, Any]:
    _refuse_item_families(settings)
    return dict(settings.env_options)


def _refuse_item_families(settings) -> None:
    if settings.families is not None:
        raise ValueError("families choose VoiceGate items; hear2act_assent trains on assent pairs")


def assent_eval_options(env_options: dict[str, Any]) -> dict[str, Any]:
    """The held-out dialogues run under prosody feedback (unless the options say otherwise)."""
    return {"feedback": "prosody", **env_options}


def assent_access(settings) -> str:
    return "T+S" if settings.state_probe is None else "T+S^"


def build_assent(settings, eos_token_ids: set[int]):
    """Assent pairs through T+S (or T+S^ with a probe), rewarded by continuation with the env's
    own return; plain, each side of every pair is its own row."""
    from agents.hear2act.assent_pairs import AssentReward, assent_pairs, pair_rows
    from agents.hear2act.audio_probe import concern_inferrer

    pairs = assent_pairs("train", limit=settings.item_limit, seed=settings.seed)
    inferrer = None if settings.state_probe is None else concern_inferrer(settings.state_probe)
    prompt_options = {k: v for k, v in settings.env_options.items() if k != "feedback"}
    rows = pair_rows(
        pairs,
        access=assent_access(settings),
        state_inferrer=inferrer,
        paired=settings.paired,
        **prompt_options,
    )
    return rows, AssentReward(pairs, eos_token_ids, **settings.env_options)


def build_audio_assent(settings, eos_token_ids: set[int]):
    """The pairs' sides as the audio agent hears them under A+T (``audio_assent``), the same reward."""
    from agents.hear2act import audio_assent

    return audio_assent.build_audio_assent(settings, eos_token_ids)


# -- the tiny models' corpus ----------------------------------------------------------------------
def corpus(max_scenarios: int = 48) -> list[str]:
    """The prompt cards, the user's phrase frames, and the requests, option lists and concerns of
    the first ``max_scenarios`` scenarios, with a few replies."""
    from agents.hear2act.prompts import CLARIFY_FORM, CLARIFY_LINE, P6A, P6B, P6D, SER
    from hear_gym.envs.hear2act.scenario_facts import options_text
    from hear_gym.envs.hear2act.scenarios.bank import scenario_bank
    from hear_gym.envs.hear2act.user.realizer import FRAMES

    texts = [P6A, P6B, P6D, SER, CLARIFY_LINE, CLARIFY_FORM]
    texts += [f for frames in FRAMES.values() for f in frames]
    for scenario in scenario_bank()[:max_scenarios]:
        texts += [scenario.request, options_text(scenario), *(c.requirement for c in scenario.concerns)]
    texts += [
        "[ACTION: RECOMMEND] [OPTION: 3] I recommend this one.",
        "[ACTION: CONFIRM] Done.",
        "[ACTION: ASK] What matters most to you?",
    ]
    return texts


def phrases() -> list[str]:
    """Every domain's requirement, direction and option-feature phrases, each as the env writes it
    inside option descriptions and user turns."""
    from hear_gym.envs.hear2act.scenarios.domain_schema import load_domains

    fields = ("requirements", "directions", "satisfied", "violated")
    found = (
        p for d in load_domains() for dim in d.concern_dimensions for f in fields for p in getattr(dim, f)
    )
    return list(dict.fromkeys(found))


# -- PPO policies --------------------------------------------------------------------------------
def _per_option_policy() -> type:
    from agents.hear2act.option_policy import PerOptionPolicy

    return PerOptionPolicy


def _privileged_option_policy() -> type:
    from agents.hear2act.option_policy import PrivilegedCriticOptionPolicy

    return PrivilegedCriticOptionPolicy


def _listening_option_policy() -> type:
    from agents.hear2act.option_policy import ListeningOptionPolicy

    return ListeningOptionPolicy


MATERIAL = TrainingMaterial(
    chat_agent=LLMAgent,
    demos=DemoSource(hear2act_demos, DEMO_ACCESS),
    tool_demos=DemoSource(hear2act_tool_demos, TOOL_DEMO_ACCESS),
    grpo_tasks={
        "hear2act_assent": DecisionTask(
            check=check_assent,
            access=assent_access,
            build=build_assent,
            eval_options=assent_eval_options,
        )
    },
    dialogue_tasks={"hear2act_dialogue": DIALOGUE, "hear2act_dialogue_state": DIALOGUE_STATE},
    # "per_option": a shared scorer over the options; "per_option_listening": the same with a
    # listening head on the confirm logit, started from a per_option checkpoint;
    # "per_option_privileged": per_option with a critic that also reads the hidden concern state
    ppo_policies={
        "per_option": PPOPolicy(_per_option_policy),
        "per_option_listening": PPOPolicy(
            _listening_option_policy, extends="per_option", extra_layers=("action_net.listen.",)
        ),
        "per_option_privileged": PPOPolicy(_privileged_option_policy, privileged=PRIVILEGED_CONCERN),
    },
    corpus=corpus,
    phrases=phrases,
    audio_chat_agent=AudioLLMAgent,
    audio_grpo_tasks={
        "hear2act_assent": AudioDecisionTask(
            check=check_audio_assent,
            build=build_audio_assent,
            eval_options=assent_eval_options,
        )
    },
    # the default env of PPO and of dialogue GRPO (its hear2act_dialogue) when a run names none
    default_for=frozenset({"ppo_policies", "dialogue_tasks", "tool_demos"}),
)
