"""Tiny models of real architectures with their real processors, built offline.

Each fixture is what ``save_pretrained`` of a released checkpoint writes, at a tiny size: the
architecture's own config class and model class (Qwen2 for Qwen2.5-Instruct, Qwen2-Audio, the
whole Qwen2.5-Omni with thinker, talker and token2wav), a ``Qwen2Tokenizer`` with the
checkpoint's special tokens (its BPE vocabulary trained on hear_gym's own text, so prompts stay
short), the checkpoint's ``WhisperFeatureExtractor`` settings (128 mel bins, 30 s windows) and
its chat template as the hub ships it (``SOURCES.md``). Nothing is downloaded.

Unlike ``training.tiny_model`` (the project's own simplified template and processor), these hide
none of the differences a user meets with a real checkpoint.
"""

from __future__ import annotations

import functools
from pathlib import Path

HERE = Path(__file__).parent
# Qwen2.5-Instruct's special tokens (tokenizer_config.json): turns end with <|im_end|>, which is
# the EOS of the instruct checkpoints; <|endoftext|> pads. The tool-call tags are plain added tokens.
TEXT_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TOOL_TAGS = ["<tool_call>", "</tool_call>"]
AUDIO_SPECIAL = ["<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"]
VISION_SPECIAL = ["<|IMAGE|>", "<|VIDEO|>", "<|vision_bos|>", "<|vision_eos|>"]
# Qwen2.5-Omni's tokenizer names its placeholders (transformers' model-specific special tokens)
OMNI_NAMED_TOKENS = {
    "audio_token": "<|AUDIO|>",
    "audio_bos_token": "<|audio_bos|>",
    "audio_eos_token": "<|audio_eos|>",
    "image_token": "<|IMAGE|>",
    "video_token": "<|VIDEO|>",
    "vision_bos_token": "<|vision_bos|>",
    "vision_eos_token": "<|vision_eos|>",
}
HIDDEN, LAYERS, HEADS, KV_HEADS = 64, 2, 4, 2
VOCAB = 2048


def chat_template(name: str) -> str:
    return (HERE / f"{name}_chat_template.jinja").read_text(encoding="utf-8")


def qwen2_tokenizer(special: list[str], named: dict[str, str] | None = None):
    """A ``Qwen2Tokenizer`` (Qwen2's pre-tokenizer, byte-level BPE) whose vocabulary is trained on
    hear_gym's text, with ``special`` as special tokens and the tool tags as plain added ones."""
    from tokenizers import AddedToken
    from transformers import Qwen2Tokenizer

    vocab, merges = _vocabulary()
    tokenizer = Qwen2Tokenizer(
        vocab=dict(vocab),
        merges=list(merges),
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        extra_special_tokens=named or {},
    )
    tokenizer.add_tokens(
        [AddedToken(t, special=True, normalized=False) for t in special], special_tokens=True
    )
    tokenizer.add_special_tokens({"additional_special_tokens": [t for t in special if t not in TEXT_SPECIAL]})
    tokenizer.add_tokens([AddedToken(tag, normalized=False, special=False) for tag in TOOL_TAGS])
    return tokenizer


@functools.cache
def _vocabulary() -> tuple[dict[str, int], list[tuple[str, str]]]:
    """A byte-level BPE vocabulary and its merges (in training order) trained on hear_gym's text;
    the special tokens come after it, as in the real checkpoints' vocabularies."""
    import json
    import tempfile

    from tokenizers import ByteLevelBPETokenizer

    from training.tiny_model import corpus

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus(), vocab_size=VOCAB, min_frequency=2)
    with tempfile.TemporaryDirectory() as folder:
        bpe.save_model(folder)
        vocab = json.loads(Path(folder, "vocab.json").read_text(encoding="utf-8"))
        lines = Path(folder, "merges.txt").read_text(encoding="utf-8").splitlines()
    return vocab, [tuple(line.split(" ")) for line in lines if line and not line.startswith("#")]


def _text_kwargs(tokenizer) -> dict:
    return {
        "vocab_size": len(tokenizer),
        "hidden_size": HIDDEN,
        "intermediate_size": 2 * HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "max_position_embeddings": 8192,
        "tie_word_embeddings": True,
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        "eos_token_id": tokenizer.eos_token_id,
    }


def _generation_config(tokenizer):
    """The instruct checkpoints' generation config: stop at <|im_end|> or <|endoftext|>."""
    from transformers import GenerationConfig

    endoftext = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    return GenerationConfig(
        bos_token_id=endoftext, eos_token_id=[tokenizer.eos_token_id, endoftext], pad_token_id=endoftext
    )


def _save(model, out: Path, tokenizer, seed: int) -> None:
    model.generation_config = _generation_config(tokenizer)
    model.save_pretrained(out)


def _seeded(build, seed: int):
    """``build()`` with torch's default generator seeded inside a fork: initial weights are
    reproducible and the caller's RNG state is left alone."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


def whisper_features():
    """The feature extractor Qwen2-Audio and Qwen2.5-Omni ship (128 mel bins, 30 s windows)."""
    from transformers import WhisperFeatureExtractor

    return WhisperFeatureExtractor(
        feature_size=128, sampling_rate=16_000, hop_length=160, chunk_length=30, n_fft=400, padding_value=0.0
    )


def build_qwen2_5_instruct(out: Path, seed: int = 0) -> Path:
    """A Qwen2.5-Instruct-shaped text model (``Qwen2ForCausalLM``) with Qwen2.5's chat template."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = qwen2_tokenizer(TEXT_SPECIAL)
    tokenizer.chat_template = chat_template("qwen2_5")
    tokenizer.save_pretrained(out)
    config = Qwen2Config(**_text_kwargs(tokenizer))
    _save(_seeded(lambda: Qwen2ForCausalLM(config), seed), out, tokenizer, seed)
    return out


def build_qwen2_audio_instruct(out: Path, seed: int = 0) -> Path:
    """A Qwen2-Audio-7B-Instruct-shaped model (Whisper-style encoder, projector, Qwen2 decoder)
    and its processor: the real feature extractor settings and the hub's chat template."""
    from transformers import (
        Qwen2AudioConfig,
        Qwen2AudioEncoderConfig,
        Qwen2AudioForConditionalGeneration,
        Qwen2AudioProcessor,
        Qwen2Config,
    )

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = qwen2_tokenizer(TEXT_SPECIAL + AUDIO_SPECIAL)
    processor = Qwen2AudioProcessor(
        feature_extractor=whisper_features(), tokenizer=tokenizer, chat_template=chat_template("qwen2_audio")
    )
    processor.save_pretrained(out)
    encoder = Qwen2AudioEncoderConfig(
        num_mel_bins=128,
        encoder_layers=1,
        encoder_attention_heads=2,
        encoder_ffn_dim=64,
        d_model=32,
        max_source_positions=1500,
    )
    config = Qwen2AudioConfig(
        audio_config=encoder,
        text_config=Qwen2Config(**_text_kwargs(tokenizer)),
        audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"),
    )
    _save(_seeded(lambda: Qwen2AudioForConditionalGeneration(config), seed), out, tokenizer, seed)
    return out


def build_qwen2_5_omni(out: Path, seed: int = 0) -> Path:
    """A whole Qwen2.5-Omni checkpoint (``Qwen2_5OmniForConditionalGeneration``: the thinker, which
    reads audio and writes text, and the talker and token2wav, which speak) with its speaker
    table and processor files, all tiny."""
    import torch
    from transformers import Qwen2_5OmniForConditionalGeneration
    from transformers.models.qwen2_5_omni import configuration_qwen2_5_omni as omni

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = qwen2_tokenizer(TEXT_SPECIAL + AUDIO_SPECIAL + VISION_SPECIAL, named=OMNI_NAMED_TOKENS)
    _save_omni_processor(out, tokenizer)
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in OMNI_NAMED_TOKENS.items()}
    text = omni.Qwen2_5OmniTextConfig(
        **_text_kwargs(tokenizer), rope_scaling={"rope_type": "default", "mrope_section": [2, 3, 3]}
    )
    thinker = omni.Qwen2_5OmniThinkerConfig(
        audio_config=omni.Qwen2_5OmniAudioEncoderConfig(
            num_mel_bins=128,
            encoder_layers=1,
            encoder_attention_heads=2,
            encoder_ffn_dim=64,
            d_model=32,
            output_dim=HIDDEN,
            n_window=100,
        ),
        vision_config=omni.Qwen2_5OmniVisionEncoderConfig(
            depth=1,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            out_hidden_size=HIDDEN,
            fullatt_block_indexes=[0],
        ),
        text_config=text,
        audio_token_index=ids["audio_token"],
        image_token_index=ids["image_token"],
        video_token_index=ids["video_token"],
        audio_start_token_id=ids["audio_bos_token"],
        audio_end_token_id=ids["audio_eos_token"],
        vision_start_token_id=ids["vision_bos_token"],
        vision_end_token_id=ids["vision_eos_token"],
    )
    talker = omni.Qwen2_5OmniTalkerConfig(
        vocab_size=64,
        embedding_size=HIDDEN,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        rope_scaling={"rope_type": "default", "mrope_section": [2, 3, 3]},
        tts_codec_start_token_id=60,
        tts_codec_end_token_id=61,
        tts_codec_pad_token_id=62,
        tts_codec_mask_token_id=63,
        tts_text_start_token_id=ids["audio_bos_token"],
        tts_text_end_token_id=ids["audio_eos_token"],
        tts_text_pad_token_id=tokenizer.pad_token_id,
        audio_token_index=ids["audio_token"],
        image_token_index=ids["image_token"],
        video_token_index=ids["video_token"],
        audio_start_token_id=ids["audio_bos_token"],
        audio_end_token_id=ids["audio_eos_token"],
        vision_start_token_id=ids["vision_bos_token"],
        vision_end_token_id=ids["vision_eos_token"],
    )
    token2wav = omni.Qwen2_5OmniToken2WavConfig(
        dit_config={
            "hidden_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "head_dim": 16,
            "emb_dim": 16,
            "num_embeds": 64,
            "enc_emb_dim": 16,
            "enc_dim": 16,
            "enc_channels": [16, 16, 16, 16, 48],
            "enc_attention_channels": 8,
            "enc_se_channels": 8,
            "look_ahead_layers": [1],
            "look_backward_layers": [0],
        },
        bigvgan_config={
            "upsample_initial_channel": 16,
            "resblock_kernel_sizes": [3],
            "resblock_dilation_sizes": [[1, 3, 5]],
            "upsample_rates": [2],
            "upsample_kernel_sizes": [4],
        },
    )
    config = omni.Qwen2_5OmniConfig(
        thinker_config=thinker, talker_config=talker, token2wav_config=token2wav, enable_audio_output=True
    )
    model = _seeded(lambda: Qwen2_5OmniForConditionalGeneration(config), seed)
    _save(model, out, tokenizer, seed)
    _name_architecture(
        out, "Qwen2_5OmniModel"
    )  # what the hub's config.json names (a class transformers 5 lacks)
    speaker = {"cond": torch.zeros(1, 16), "ref_mel": torch.zeros(1, 8, 80), "bos_token": 60}
    torch.save({"Chelsie": speaker}, out / "spk_dict.pt")  # the speaker table the checkpoint ships
    return out


def _save_omni_processor(out: Path, tokenizer) -> None:
    """The processor files the Qwen2.5-Omni checkpoints ship: the tokenizer, one
    ``preprocessor_config.json`` holding the Whisper feature extractor's and Qwen2-VL's image
    processor's settings, and the chat template. Written field by field: transformers 5 cannot
    build a ``Qwen2_5OmniProcessor`` without torchvision (its video processor needs it), and this
    machine's CPU torch has none (PyPI's torchvision wheels are built for CUDA torch)."""
    import json

    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    tokenizer.save_pretrained(out)
    image = Qwen2VLImageProcessorPil().to_dict()
    settings = {
        **{k: v for k, v in image.items() if not k.startswith("_")},
        **whisper_features().to_dict(),
        "image_processor_type": "Qwen2VLImageProcessor",
        "feature_extractor_type": "WhisperFeatureExtractor",
        "processor_class": "Qwen2_5OmniProcessor",
    }
    (out / "preprocessor_config.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    (out / "chat_template.jinja").write_text(chat_template("qwen2_5_omni"), encoding="utf-8")


def _name_architecture(out: Path, name: str) -> None:
    import json

    path = out / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**config, "architectures": [name]}, indent=2), encoding="utf-8")
