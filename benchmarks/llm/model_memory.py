"""Parameter counts of the model families docs/bring-your-own-model.md names, and what each costs
in memory: an estimate, parameters x bytes, never a measurement.

Each model is built on torch's ``meta`` device (no memory, no weights) from its config: the
architecture's own config class with the sizes of the released checkpoint's ``config.json``
(``CHECKPOINTS``). The estimates:

* inference weights: parameters x 2 bytes (bf16, fp16) or 4 (fp32);
* LoRA training (the trainers' default: rank 32 on q/k/v/o): the frozen weights (float32 under
  ``--dtype auto``, bfloat16 under ``--dtype bf16``) plus the adapter in float32 with its gradient
  and AdamW's two moments (16 bytes a parameter of the adapter);
* full fine-tuning: float32 weights, gradients and AdamW's two moments (16 bytes a parameter;
  ``--dtype auto`` and ``fp32``), or all of them in bfloat16 (8 bytes; ``--dtype bf16``).

Activations, the KV cache and the CUDA context come on top (a few GB for hear_gym's prompts of
1-2 thousand tokens at batch 8-16), and so does the GRPO reference model when ``beta > 0``.
An Omni checkpoint counts its thinker, the part hear_gym loads.

    python -m benchmarks.llm.model_memory        # the Markdown table
"""

from __future__ import annotations

GB = 1e9
LORA_RANK, LORA_TARGETS = 32, ("q_proj", "k_proj", "v_proj", "o_proj")


def qwen2_text(hidden, intermediate, layers, heads, kv_heads, vocab, tied):
    from transformers import Qwen2Config

    return Qwen2Config(
        hidden_size=hidden,
        intermediate_size=intermediate,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        vocab_size=vocab,
        tie_word_embeddings=tied,
    )


def qwen2_5(size: str):
    from transformers import Qwen2ForCausalLM

    sizes = {  # Qwen/Qwen2.5-{size}-Instruct config.json
        "0.5B": (896, 4864, 24, 14, 2, 151936, True),
        "1.5B": (1536, 8960, 28, 12, 2, 151936, True),
        "3B": (2048, 11008, 36, 16, 2, 151936, True),
        "7B": (3584, 18944, 28, 28, 4, 152064, False),
    }
    return Qwen2ForCausalLM, qwen2_text(*sizes[size])


def qwen2_audio():
    from transformers import Qwen2AudioConfig, Qwen2AudioEncoderConfig, Qwen2AudioForConditionalGeneration

    encoder = Qwen2AudioEncoderConfig(  # Qwen/Qwen2-Audio-7B-Instruct config.json, audio_config
        num_mel_bins=128, encoder_layers=32, encoder_attention_heads=20, encoder_ffn_dim=5120, d_model=1280
    )
    text = qwen2_text(4096, 11008, 32, 32, 32, 156032, False)
    return Qwen2AudioForConditionalGeneration, Qwen2AudioConfig(audio_config=encoder, text_config=text)


def qwen2_5_omni_thinker(size: str):
    from transformers import Qwen2_5OmniThinkerForConditionalGeneration
    from transformers.models.qwen2_5_omni import configuration_qwen2_5_omni as omni

    text = {  # Qwen/Qwen2.5-Omni-{size} config.json, thinker_config.text_config
        "3B": dict(hidden_size=2048, intermediate_size=11008, num_hidden_layers=36, num_attention_heads=16),
        "7B": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28),
    }[size]
    kv = {"3B": 2, "7B": 4}[size]
    config = omni.Qwen2_5OmniThinkerConfig(
        audio_config=omni.Qwen2_5OmniAudioEncoderConfig(
            d_model=1280,
            encoder_layers=32,
            encoder_attention_heads=20,
            encoder_ffn_dim=5120,
            output_dim=text["hidden_size"],
        ),
        vision_config=omni.Qwen2_5OmniVisionEncoderConfig(
            depth=32,
            hidden_size=1280,
            intermediate_size=3420,
            num_heads=16,
            out_hidden_size=text["hidden_size"],
        ),
        text_config=omni.Qwen2_5OmniTextConfig(
            **text,
            num_key_value_heads=kv,
            vocab_size=151936 if size == "3B" else 152064,
            tie_word_embeddings=size == "3B",
        ),
    )
    return Qwen2_5OmniThinkerForConditionalGeneration, config


CHECKPOINTS = {
    "Qwen2.5-0.5B-Instruct": lambda: qwen2_5("0.5B"),
    "Qwen2.5-1.5B-Instruct": lambda: qwen2_5("1.5B"),
    "Qwen2.5-3B-Instruct": lambda: qwen2_5("3B"),
    "Qwen2.5-7B-Instruct": lambda: qwen2_5("7B"),
    "Qwen2-Audio-7B-Instruct": qwen2_audio,
    "Qwen2.5-Omni-3B (thinker)": lambda: qwen2_5_omni_thinker("3B"),
    "Qwen2.5-Omni-7B (thinker)": lambda: qwen2_5_omni_thinker("7B"),
}


def counts(model_class, config) -> tuple[int, int]:
    """(parameters, LoRA parameters at rank 32 on the language model's q/k/v/o), on ``meta``."""
    import torch

    with torch.device("meta"):
        model = model_class(config)
    decoder = model.get_decoder()
    lora = sum(
        LORA_RANK * (module.in_features + module.out_features)
        for name, module in decoder.named_modules()
        if name.rsplit(".", 1)[-1] in LORA_TARGETS
    )
    return sum(p.numel() for p in model.parameters()), lora


def table() -> str:
    lines = [
        "| checkpoint | parameters | inference bf16 | inference fp32 | LoRA, --dtype bf16 | LoRA, --dtype auto | "
        "full, --dtype bf16 | full, --dtype auto |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, build in CHECKPOINTS.items():
        params, lora = counts(*build())
        cells = [
            params * 2,
            params * 4,
            params * 2 + lora * 16,
            params * 4 + lora * 16,
            params * 8,
            params * 16,
        ]
        lines.append(
            f"| {name} | {params / 1e9:.2f} B | " + " | ".join(f"{c / GB:.1f} GB" for c in cells) + " |"
        )
    return "\n".join(lines)


def main() -> None:
    print(table())


if __name__ == "__main__":
    main()
