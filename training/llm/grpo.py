"""GRPO on single decisions with the env's own reward, plain or paired, read top to bottom.

Two tasks (``TASKS``): VoiceGate items (below) and Hear2Act assent pairs
(``training.llm.hear2act_pairs``: one transcript at an assent turn, genuine vs reluctant acceptance,
rewarded by the env's return when the state-aware agent finishes the dialogue after the model's
reply). The pairs reach the model through the ground-truth T+S channel, or, given
``state_probe`` (a ``hear-gym train probe`` concern checkpoint), through T+S^: the sentence the
probe writes from each side's audio, so the two prompts differ only where the probe hears a
difference; the held-out evaluation then runs under T+S^ with the same probe.

1. ``GRPOSettings``: the model (a checkpoint, or an SFT output to continue from), the item
   families, plain or paired grouping, TRL's GRPO knobs, LoRA, the held-out evaluation.
2. ``gate_rows``: one dataset row per train item, the prompt built by the text agent's own
   ``gate_messages``. Paired: one row per speaker-switch pair (x+ same-speaker, x- switch);
   side-talk and self-talk items stay ordinary groups.
3. ``EnvReward``: the reward of a completion is the env's reward for it: the reply steps a
   text-action VoiceGate env on its item (``reward="paper"``, the rule rewards of VoxGate
   section 5.2; one definition, shared with PPO). A reply cut by ``max_completion_length``
   before its end-of-turn token is scored as the empty reply (malformed: the wrong-action
   reward plus the malformed penalty), never by whatever prefix the cap left. It logs the mean reward per family and the
   valid-format rate, and times itself (the environment's share of a step).
4. TRL's ``GRPOTrainer`` (``PairedGRPOTrainer`` for pairs) with ``loss_type="dapo"``; the final
   adapter or model is saved with safetensors to ``final/`` and evaluated in env loops like SFT.
   An SFT adapter given as the model is trained merged: ``training.llm.start_model`` writes it
   to the run's ``start/``, the base every adapter the run saves names.

A text model reads the transcript (access T), and the three speaker-switch inputs of one command
have the same words, so no text model can separate a switch from its same-speaker twin; paired
grouping needs a listening model to pay off. See the README.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agents.voicegate.llm import gate_messages
from hear_gym.core.registry import family
from training.llm.common import (
    EvalSettings,
    LoraSettings,
    PeriodicEvaluation,
    check_group_batch,
    check_model_folder,
    grpo_arguments,
    nested_settings,
    run_training,
    trainer_device,
)
from training.llm.decision_reward import DecisionReward
from training.llm.paired_grpo import PairedGRPOTrainer
from training.llm.run_folder import finish_curve, start_curve
from training.llm.start_model import start_folder

ENV_ID = "hear_gym/VoiceGate-v0"
TRAIN_ACCESS = "T"
FAMILIES = ("speaker_switch", "side_talk", "self_talk")
VLLM_MODES = (None, "colocate", "server")


def voicegate_families(families) -> tuple[str, ...]:
    """``families`` as a tuple of VoiceGate item families (not empty, no unknown one)."""
    families = tuple(families)
    if not families or set(families) - set(FAMILIES):
        raise ValueError(f"families must be some of {FAMILIES}, got {families}")
    return families


@dataclass
class GRPOSettings:
    out: Path
    model: str
    task: str = "voicegate"  # a key of TASKS
    families: tuple[str, ...] = FAMILIES  # VoiceGate item families
    env_options: dict[str, Any] = field(default_factory=dict)  # Hear2Act assent: reward, turn_cost, ...
    state_probe: str | None = None  # Hear2Act assent through T+S^: a concern-probe checkpoint
    paired: bool = False
    item_limit: int | None = None  # first N dataset rows (Hear2Act assent: N pairs)
    num_generations: int = 8  # K; paired: K/2 per side
    batch_size: int = 16  # completions per device and step (a multiple of K)
    max_completion_length: int = 96
    max_steps: int = 50
    learning_rate: float = 1e-5
    temperature: float = 1.0
    beta: float = 0.0  # KL weight (0: no reference model)
    vllm_mode: str | None = None  # None: generate with transformers
    lora: LoraSettings = field(default_factory=LoraSettings)
    evaluation: EvalSettings = field(default_factory=EvalSettings)
    eval_every: int = 0  # optimizer steps between held-out evaluations (0: only before and after)
    device: str = "auto"  # auto, cpu, cuda or cuda:N: where it trains (common.trainer_device)
    seed: int = 0
    wandb_project: str | None = "hear-gym"
    progress: bool = True

    def __post_init__(self) -> None:
        self.out = Path(self.out)
        self.families = voicegate_families(self.families)
        self.lora, self.evaluation = nested_settings(self.lora, self.evaluation)
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {sorted(TASKS)}, got {self.task!r}")
        task = TASKS[self.task]
        if (self.env_options or self.state_probe) and self.task == "voicegate":
            raise ValueError(
                "env_options and state_probe are for the hear2act_assent task (VoiceGate's reward is fixed)"
            )
        if self.state_probe is not None:
            self.state_probe = str(self.state_probe)
            self.env_options = with_probe_audio(self.state_probe, self.env_options)
        self.evaluation = self.evaluation.resolved(
            task.access(self), task.eval_options(self.env_options), self.state_probe
        )
        if self.num_generations < 2 or (self.paired and self.num_generations % 2):
            raise ValueError("num_generations must be >= 2, and even for paired GRPO (K/2 per side)")
        check_group_batch(self.batch_size, self.num_generations)
        if self.eval_every < 0:
            raise ValueError("eval_every must be >= 0")
        for name in ("max_completion_length", "max_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.vllm_mode not in VLLM_MODES:
            raise ValueError(f"vllm_mode must be one of {VLLM_MODES}")
        if self.paired and self.vllm_mode == "server":
            raise ValueError(
                "paired GRPO cannot use vLLM server mode (it samples a whole group from one "
                "prompt, which breaks pairing); use vllm_mode='colocate'"
            )
        if self.paired and self.task == "voicegate" and "speaker_switch" not in self.families:
            raise ValueError("paired GRPO pairs speaker-switch commands: include 'speaker_switch'")
        trainer_device(self.device)  # a device this machine lacks: refused now
        self.model = check_model_folder(self.model)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "out": str(self.out)}


# -- 2. the dataset ----------------------------------------------------------------------------
def gate_rows(families=FAMILIES, paired: bool = False, split: str = "train") -> list[dict[str, Any]]:
    """Rows ``prompt``, ``item_id``, ``item_family``, ``prompt_minus``, ``item_id_minus``."""
    env_family = family(ENV_ID)
    ids = env_family.episode_ids(split, tuple(families))
    env = env_family.make(access=TRAIN_ACCESS, actions="text", item_ids=list(ids))
    prompts, info_of = {}, {}
    try:
        for item_id in ids:
            observation, info = env.reset(options=env_family.reset_options(item_id))
            prompts[item_id], info_of[item_id] = gate_messages(observation), info
    finally:
        env.close()
    rows = []
    for item_id in ids:
        info = info_of[item_id]
        if paired and info["family"] == "speaker_switch":
            if info["condition"] != "same_speaker":
                continue  # the switch side joins its same-speaker twin; text-only stays out
            minus = f"{info['group']}/switch"
        else:
            minus = item_id
        rows.append(
            {
                "prompt": prompts[item_id],
                "item_id": item_id,
                "item_family": info["family"],
                "prompt_minus": prompts[minus],
                "item_id_minus": minus,
            }
        )
    return rows


# -- 3. the reward -----------------------------------------------------------------------------
class EnvReward(DecisionReward):
    """The VoiceGate env's reward for a reply: the reply steps a text-action env on its item."""

    def __init__(self, item_ids, eos_token_ids) -> None:
        super().__init__(eos_token_ids)
        self.env_family = family(ENV_ID)
        self.env = self.env_family.make(access=TRAIN_ACCESS, actions="text", item_ids=list(item_ids))

    def score(self, item_id: str, reply: str) -> tuple[float, bool]:
        self.env.reset(options=self.env_family.reset_options(item_id))
        _, reward, _, _, info = self.env.step(reply)
        return float(reward), info["outcome"]["action"]["kind"] != "malformed"


# -- what GRPO trains on ------------------------------------------------------------------------
@dataclass(frozen=True)
class DecisionTask:
    """Rows and their reward, and where the trained model is evaluated."""

    env_id: str
    access: Callable[[GRPOSettings], str]  # the condition the prompts come from; evaluated under it
    build: Callable[[GRPOSettings, set[int]], tuple[list[dict[str, Any]], Any]]  # (rows, reward)
    eval_options: Callable[[dict[str, Any]], dict[str, Any]]


def voicegate_task(settings: GRPOSettings, eos_token_ids: set[int]):
    rows = gate_rows(settings.families, settings.paired)[: settings.item_limit]
    items = {r["item_id"] for r in rows} | {r["item_id_minus"] for r in rows}
    return rows, EnvReward(items, eos_token_ids)


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


def assent_access(settings: GRPOSettings) -> str:
    return "T+S" if settings.state_probe is None else "T+S^"


def hear2act_assent_task(settings: GRPOSettings, eos_token_ids: set[int]):
    """Hear2Act assent pairs (``training.llm.hear2act_pairs``) through T+S (or T+S^ with a probe),
    rewarded by continuation with the env's own return."""
    from agents.hear2act.audio_probe import concern_inferrer
    from training.llm.hear2act_pairs import AssentReward, assent_pairs, pair_rows

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


TASKS = {
    "voicegate": DecisionTask(ENV_ID, lambda settings: TRAIN_ACCESS, voicegate_task, lambda options: {}),
    "hear2act_assent": DecisionTask(
        "hear_gym/Hear2Act-v0",
        assent_access,
        hear2act_assent_task,
        lambda options: {"feedback": "prosody", **options},
    ),
}


# -- 4. the trainer ----------------------------------------------------------------------------
def load_policy(model: str):
    """(model, tokenizer) from a checkpoint or an SFT LoRA adapter (merged into its base)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agents.llm.clients import load_pretrained, processing_source

    tokenizer = AutoTokenizer.from_pretrained(processing_source(model))
    return load_pretrained(AutoModelForCausalLM, model), tokenizer


def end_of_turn_ids(model, tokenizer) -> set[int]:
    """Every id that ends a completion: the tokenizer's EOS and the model's declared ones (as
    ``GRPOTrainer`` stops generation)."""
    declared = model.generation_config.eos_token_id
    declared = [] if declared is None else [declared] if isinstance(declared, int) else list(declared)
    return {tokenizer.eos_token_id, *declared}


def make_trainer(settings: GRPOSettings, rows: list[dict[str, Any]], reward, policy, callbacks=()):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    config = GRPOConfig(
        **grpo_arguments(settings, checkpoint_every=settings.eval_every),
        use_vllm=settings.vllm_mode is not None,
        vllm_mode=settings.vllm_mode or "colocate",
    )
    trainer_class = PairedGRPOTrainer if settings.paired else GRPOTrainer
    model, tokenizer = policy
    return trainer_class(
        model=model,
        processing_class=tokenizer,
        reward_funcs=[reward],
        args=config,
        train_dataset=Dataset.from_list(rows),
        peft_config=settings.lora.peft_config(),
        callbacks=list(callbacks),
    )


def train(settings: GRPOSettings) -> dict[str, Any]:
    task = TASKS[settings.task]
    curve = start_curve(settings.out, settings.to_json(), task.env_id, settings.wandb_project)
    try:
        start = start_folder(settings.model, settings.out, load_policy)  # an SFT adapter, merged
        policy = load_policy(start)
        rows, reward = task.build(settings, end_of_turn_ids(*policy))
        periodic = PeriodicEvaluation(
            curve, settings.eval_every, task.env_id, settings.evaluation, settings.seed
        )
        trainer = make_trainer(settings, rows, reward, policy, callbacks=[curve, periodic])
        result = run_training(
            trainer, curve, start, task.env_id, settings.evaluation, settings.seed, env_timer=reward
        )
    finally:
        finish_curve(curve)
    return {**result, "rows": len(rows)}


def train_grpo(**settings: Any) -> dict[str, Any]:
    """The ``hear_gym.components`` entry point ``train_grpo``: ``train(GRPOSettings(**settings))``."""
    return train(GRPOSettings(**settings))
