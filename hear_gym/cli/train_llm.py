"""``hear-gym train sft`` and ``hear-gym train grpo``: post-train a chat model (needs
hear-gym[train]); the trainers are found by entry point (``train_sft``, ``train_grpo``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from hear_gym.cli.common import ProgressOption, SeedOption, component, console, fail
from hear_gym.cli.train import DEVICE_FORMS, env_options, train_app
from hear_gym.core.registry import family

RunFolderOption = Annotated[
    Path,
    typer.Option(
        help="Run folder (created; must not hold another training run; this run, interrupted, "
        "resumes from its last --eval-every checkpoint, or starts over without one)."
    ),
]
ModelOption = Annotated[
    str,
    typer.Option(help="Model to train: a local folder (or cached hub id); GRPO also takes an SFT adapter."),
]
LoraOption = Annotated[bool, typer.Option(help="Train a LoRA adapter (else all weights).")]
LoraRank = Annotated[int, typer.Option(min=1, help="LoRA rank (VoxGate: 32).")]
LoraAlpha = Annotated[int, typer.Option(min=1, help="LoRA alpha (VoxGate: 64).")]
LoraTargets = Annotated[str, typer.Option(help="Comma-separated modules LoRA adapts.")]
EvalLimit = Annotated[int | None, typer.Option(min=1, help="Evaluate on the first N held-out episodes only.")]
EvalBase = Annotated[bool, typer.Option(help="Also evaluate the model before training.")]
EvalEvery = Annotated[
    int, typer.Option(min=0, help="Evaluate a checkpoint every N optimizer steps (0: before and after only).")
]
DeviceOption = Annotated[
    str,
    typer.Option(
        help=f"Where the model trains and is evaluated: {DEVICE_FORMS}; bfloat16 mixed precision on "
        "a GPU that has it. Several GPUs: accelerate launch (docs/post-training.md)."
    ),
]
DtypeOption = Annotated[
    str,
    typer.Option(
        help="Weights and precision: auto (float32 weights, bfloat16 autocast on a GPU that has it), bf16 "
        "(bfloat16 weights: half the memory), fp16 (float16 autocast, CUDA only) or fp32; the "
        "evaluations load the model in it too."
    ),
]
CheckpointingOption = Annotated[
    bool | None,
    typer.Option(
        "--gradient-checkpointing/--no-gradient-checkpointing",
        help="Recompute activations in the backward pass: less GPU memory, about 20-30% more time "
        "[default: on a GPU, off on the CPU].",
        show_default=False,
    ),
]
TrustOption = Annotated[
    bool,
    typer.Option(
        help="Load a checkpoint that ships its own code (auto_map), running that code here; off: such a "
        "checkpoint is refused."
    ),
]
WandbProject = Annotated[str | None, typer.Option(help="W&B project (offline unless WANDB_API_KEY is set).")]
Wandb = Annotated[bool, typer.Option(help="Log curves to W&B.")]
AudioOption = Annotated[
    bool,
    typer.Option(
        help="Train an audio-language model (Qwen2-Audio layout) under A+T on the audio material of "
        "the env's family: it hears each input (play it with --cell audio_llm@A+T --llm-client "
        "hf-audio:OUT/final)."
    ),
]


def _lora(enabled: bool, rank: int, alpha: int, targets: str) -> dict[str, Any]:
    return {"enabled": enabled, "rank": rank, "alpha": alpha, "targets": tuple(targets.split(","))}


def _report(result: dict[str, Any], out: Path) -> None:
    for name, metrics in result["metrics"].items():
        points = {
            metric: f"{100 * e['point']:.1f}" for metric, e in metrics.items() if e.get("point") is not None
        }
        console.print(f"[bold]{name}[/bold] " + json.dumps(points))
    console.print(f"model: {result['model']}  curve: {out / 'curve.jsonl'}")


def _refuse_for_audio(unusable: bool, flags: str) -> None:
    if unusable:
        fail(f"--audio trains under A+T; it takes none of {flags}")


def _run(trainer: str, **settings: Any) -> None:
    try:
        result = component(trainer)(**settings)
    except (ValueError, FileExistsError, RuntimeError, ImportError) as exc:  # ImportError: names its extra
        fail(str(exc))
    _report(result, settings["out"])


@train_app.command("sft")
def train_sft_command(
    out: RunFolderOption,
    model: ModelOption,
    env: Annotated[
        str,
        typer.Option(
            help="Whose experts demonstrate: an env whose family declares SFT demonstrations in its "
            "training material (VoiceGate: gold actions; Hear2Act: state-aware at T+S), or audio "
            "demonstrations with --audio (VoiceGate: gold actions under A+T)."
        ),
    ] = "hear_gym/VoiceGate-v0",
    option: Annotated[
        list[str] | None,
        typer.Option(help="KEY=VALUE gym.make option, repeatable (Hear2Act: feedback=prosody)."),
    ] = None,
    demo_limit: Annotated[
        int | None,
        typer.Option(
            min=1, help="As the family's source counts (VoiceGate: N items, seeded; Hear2Act: N dialogues)."
        ),
    ] = None,
    demo_option: Annotated[
        list[str] | None,
        typer.Option(
            help="KEY=VALUE option of the family's demonstration source, repeatable (VoiceGate: "
            "exclude_conditions=switch drops the speaker-switch commands a text model cannot read)."
        ),
    ] = None,
    epochs: Annotated[float, typer.Option(help="Passes over the demonstrations.")] = 3.0,
    max_steps: Annotated[int | None, typer.Option(min=1, help="Stop after N optimizer steps.")] = None,
    learning_rate: Annotated[float, typer.Option(help="AdamW learning rate (VoxGate: 1e-4).")] = 1e-4,
    batch_size: Annotated[int, typer.Option(min=1, help="Demonstrations per device and step.")] = 8,
    gradient_accumulation: Annotated[int, typer.Option(min=1, help="Steps per optimizer update.")] = 1,
    lora: LoraOption = True,
    lora_rank: LoraRank = 32,
    lora_alpha: LoraAlpha = 64,
    lora_targets: LoraTargets = "q_proj,k_proj,v_proj,o_proj",
    eval_limit: EvalLimit = None,
    eval_base: EvalBase = True,
    eval_every: EvalEvery = 0,
    audio: AudioOption = False,
    device: DeviceOption = "auto",
    dtype: DtypeOption = "auto",
    gradient_checkpointing: CheckpointingOption = None,
    trust_remote_code: TrustOption = False,
    seed: SeedOption = 0,
    wandb_project: WandbProject = "hear-gym",
    wandb: Wandb = True,
    progress: ProgressOption = True,
) -> None:
    """Fine-tune a chat model on expert demonstrations (TRL SFTTrainer, loss on the reply only).

    Writes settings.json, demos.jsonl, curve.jsonl, final/ (LoRA adapter or model, safetensors)
    and evals/{base,final}/; play the result with
    `hear-gym eval --env ENV --cell llm@ACCESS --llm-client hf:OUT/final`."""
    family(env)
    settings: dict[str, Any] = {"env_id": env, "env_options": env_options(option)}
    if audio:
        _refuse_for_audio(bool(eval_every or demo_option), "--eval-every, --demo-option")
    else:
        settings["eval_every"] = eval_every
        settings["demo_options"] = env_options(demo_option)
    _run(
        "train_audio_sft" if audio else "train_sft",
        out=out,
        model=model,
        demo_limit=demo_limit,
        epochs=epochs,
        max_steps=max_steps,
        learning_rate=learning_rate,
        batch_size=batch_size,
        gradient_accumulation=gradient_accumulation,
        lora=_lora(lora, lora_rank, lora_alpha, lora_targets),
        evaluation={"limit": eval_limit, "base": eval_base},
        device=device,
        dtype=dtype,
        gradient_checkpointing=gradient_checkpointing,
        trust_remote_code=trust_remote_code,
        seed=seed,
        wandb_project=wandb_project if wandb else None,
        progress=progress,
        **settings,
    )


@train_app.command("grpo")
def train_grpo_command(
    out: RunFolderOption,
    model: ModelOption,
    task: Annotated[
        str,
        typer.Option(
            help="A GRPO task some family's training material declares: voicegate (VoiceGate items) or "
            "hear2act_assent (Hear2Act assent pairs through T+S, T+S^ with --state-probe, or their audio "
            "with --audio)."
        ),
    ] = "voicegate",
    state_probe: Annotated[
        Path | None,
        typer.Option(
            help="hear2act_assent through T+S^: a concern probe (`hear-gym train probe`) writes the "
            "state channel from each side's audio, in training and in the held-out evaluation."
        ),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option(
            help="KEY=VALUE Hear2Act env option of hear2act_assent (reward=tiered, turn_cost=0.02)."
        ),
    ] = None,
    family_name: Annotated[
        list[str] | None,
        typer.Option("--family", help="VoiceGate item family to train on, repeatable (default: all three)."),
    ] = None,
    paired: Annotated[
        bool, typer.Option(help="Paired-group GRPO: K/2 completions of each side of a counterfactual pair.")
    ] = False,
    item_limit: Annotated[
        int | None, typer.Option(min=1, help="First N pairs or unpaired items (plain: each side a row).")
    ] = None,
    num_generations: Annotated[int, typer.Option(min=2, help="Completions per group (K).")] = 8,
    batch_size: Annotated[int, typer.Option(min=1, help="Completions per device and step.")] = 16,
    max_completion_length: Annotated[int, typer.Option(min=1, help="Token cap of a reply.")] = 96,
    max_steps: Annotated[int, typer.Option(min=1, help="Optimizer steps.")] = 50,
    learning_rate: Annotated[float, typer.Option(help="AdamW learning rate.")] = 1e-5,
    temperature: Annotated[float, typer.Option(help="Sampling temperature of the rollouts.")] = 1.0,
    beta: Annotated[float, typer.Option(help="KL weight (0: no reference model).")] = 0.0,
    vllm_mode: Annotated[
        str | None, typer.Option(help="Generate with vLLM: colocate or server (server breaks pairing).")
    ] = None,
    lora: LoraOption = True,
    lora_rank: LoraRank = 32,
    lora_alpha: LoraAlpha = 64,
    lora_targets: LoraTargets = "q_proj,k_proj,v_proj,o_proj",
    eval_limit: EvalLimit = None,
    eval_base: EvalBase = True,
    eval_every: EvalEvery = 0,
    audio: AudioOption = False,
    device: DeviceOption = "auto",
    dtype: DtypeOption = "auto",
    gradient_checkpointing: CheckpointingOption = None,
    trust_remote_code: TrustOption = False,
    seed: SeedOption = 0,
    wandb_project: WandbProject = "hear-gym",
    wandb: Wandb = True,
    progress: ProgressOption = True,
) -> None:
    """GRPO on single decisions with the env's reward (plain or paired groups): VoiceGate items,
    or Hear2Act assent pairs (same words, genuine vs reluctant acceptance).

    Writes settings.json, curve.jsonl (reward per family, valid-format rate, dropped-group
    fraction, the env's share of training time), final/ and evals/."""
    settings: dict[str, Any] = {"task": task, "env_options": env_options(option)}
    if audio:
        unusable = state_probe is not None or vllm_mode is not None or bool(eval_every)
        _refuse_for_audio(unusable, "--state-probe/--vllm-mode/--eval-every")
    else:
        settings |= {"state_probe": state_probe, "vllm_mode": vllm_mode, "eval_every": eval_every}
    if family_name:
        settings["families"] = tuple(family_name)
    _run(
        "train_audio_grpo" if audio else "train_grpo",
        out=out,
        model=model,
        paired=paired,
        item_limit=item_limit,
        num_generations=num_generations,
        batch_size=batch_size,
        max_completion_length=max_completion_length,
        max_steps=max_steps,
        learning_rate=learning_rate,
        temperature=temperature,
        beta=beta,
        lora=_lora(lora, lora_rank, lora_alpha, lora_targets),
        evaluation={"limit": eval_limit, "base": eval_base},
        device=device,
        dtype=dtype,
        gradient_checkpointing=gradient_checkpointing,
        trust_remote_code=trust_remote_code,
        seed=seed,
        wandb_project=wandb_project if wandb else None,
        progress=progress,
        **settings,
    )


@train_app.command("dialogue-grpo")
def train_dialogue_grpo_command(
    out: RunFolderOption,
    model: ModelOption,
    task: Annotated[
        str,
        typer.Option(help="A dialogue task some family's training material declares (hear2act_dialogue)."),
    ] = "hear2act_dialogue",
    option: Annotated[
        list[str] | None,
        typer.Option(
            help="KEY=VALUE Hear2Act env option (feedback=explicit|prosody, reward, turn_cost, ...)."
        ),
    ] = None,
    n_scenarios: Annotated[int, typer.Option(min=1, help="Train scenarios in the dataset.")] = 32,
    scenarios_per_step: Annotated[int, typer.Option(min=1, help="Prompts per optimizer step.")] = 2,
    num_generations: Annotated[int, typer.Option(min=2, help="Dialogues per scenario and step (K).")] = 4,
    max_completion_length: Annotated[
        int, typer.Option(min=1, help="Token cap of a whole dialogue after its prompt (model + user).")
    ] = 1024,
    max_steps: Annotated[int, typer.Option(min=1, help="Optimizer steps.")] = 100,
    learning_rate: Annotated[float, typer.Option(help="AdamW learning rate.")] = 1e-5,
    temperature: Annotated[float, typer.Option(help="Sampling temperature of the rollouts.")] = 1.0,
    lora: LoraOption = True,
    lora_rank: LoraRank = 32,
    lora_alpha: LoraAlpha = 64,
    lora_targets: LoraTargets = "q_proj,k_proj,v_proj,o_proj",
    eval_limit: EvalLimit = None,
    eval_base: EvalBase = False,
    device: DeviceOption = "auto",
    dtype: DtypeOption = "auto",
    gradient_checkpointing: CheckpointingOption = None,
    trust_remote_code: TrustOption = False,
    seed: SeedOption = 0,
    wandb_project: WandbProject = "hear-gym",
    wandb: Wandb = True,
    interface: Annotated[
        str,
        typer.Option(
            help="tools: act through the family's named tools (TRL environment_factory); "
            "text: the paper's P6a replies (TRL rollout_func)."
        ),
    ] = "tools",
    max_tool_calls: Annotated[int, typer.Option(min=1, help="tools: tool-calling turns per dialogue.")] = 32,
    progress: ProgressOption = True,
) -> None:
    """Multi-turn GRPO on whole Hear2Act dialogues (access T): the model plays the assistant turn
    by turn against the user engine; the user's tokens never enter the loss.

    Writes settings.json, curve.jsonl, final/ and evals/. With --interface tools the model acts
    through named tools and plays held-out scenarios through the same tools; with --interface
    text the final model plays held-out scenarios as `llm_dialogue@T`."""
    options = env_options(option)
    _run(
        "train_dialogue_grpo",
        out=out,
        model=model,
        task=task,
        env_options={"feedback": "explicit", **options},
        n_scenarios=n_scenarios,
        scenarios_per_step=scenarios_per_step,
        num_generations=num_generations,
        max_completion_length=max_completion_length,
        max_steps=max_steps,
        learning_rate=learning_rate,
        temperature=temperature,
        lora=_lora(lora, lora_rank, lora_alpha, lora_targets),
        evaluation={"limit": eval_limit, "base": eval_base},
        device=device,
        dtype=dtype,
        gradient_checkpointing=gradient_checkpointing,
        trust_remote_code=trust_remote_code,
        seed=seed,
        wandb_project=wandb_project if wandb else None,
        interface=interface,
        max_tool_calls=max_tool_calls,
        progress=progress,
    )
