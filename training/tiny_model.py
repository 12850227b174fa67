"""Build a tiny causal LM offline, for tests and dry runs of the real loading code.

A byte-level BPE tokenizer is trained with ``tokenizers`` on hear_gym's own text (each family's
``corpus``: prompt cards, scenario requests, option lists, user phrases, item words), wrapped as a transformers fast tokenizer with a
small chat template, and paired with a randomly initialized Qwen2 config (hidden 64, 2 layers);
``LEARNING_LM`` is a wider one that SFT and GRPO can teach on CPU in minutes. With
``whole_instructions``, each fixed system instruction (VoiceGate's, with its tool inventory) is one
token of the vocabulary: the chat the agents send is unchanged, but a VoiceGate prompt is about 40
tokens instead of 1,400, so a small model reads it at a small cost (real models read the text).
``build_tiny_audio_lm`` adds a 1-layer Whisper-style encoder and a processor in the Qwen2-Audio
layout. Everything is saved with ``save_pretrained``; load it with any ``from_pretrained`` call.
No hub access is needed or attempted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# Every turn ends with the EOS token, as real instruct templates end turns with theirs (Qwen's
# <|im_end|>): a model fine-tuned on these turns learns to stop after its reply.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}<|endoftext|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|pad|>", "<|system|>", "<|user|>", "<|assistant|>"]
# A tool-calling model uses Qwen2.5's chat template verbatim (TRL recognizes it, so it can parse the
# model's <tool_call> blocks): its turn markers are special tokens, its tool tags whole tokens.
TOOL_SPECIAL_TOKENS = ["<|im_start|>", "<|im_end|>"]
TOOL_TAGS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
AUDIO_TOKENS = ["<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"]
AUDIO_CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{% if m['content'] is string %}{{ m['content'] }}"
    "{% else %}{% for c in m['content'] %}{% if c['type'] == 'audio' %}<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% else %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|endoftext|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def corpus(env_ids: Sequence[str] | None = None) -> list[str]:
    """The text the tokenizer is trained on: each family's ``corpus`` (its training material), in
    registration order; ``env_ids`` keeps those envs' families only (default: every family)."""
    return _from_families("corpus", env_ids)


def fixed_instructions(env_ids: Sequence[str] | None = None) -> list[str]:
    """System instructions a family's prompts repeat word for word (its material's
    ``instructions``), in registration order."""
    return _from_families("instructions", env_ids)


def fixed_phrases(env_ids: Sequence[str] | None = None) -> list[str]:
    """Phrases a family's observations repeat word for word (its material's ``phrases``)."""
    return _from_families("phrases", env_ids)


def _chosen(env_ids: Sequence[str] | None) -> list[str]:
    from hear_gym.core.registry import env_ids as registered

    known = registered()
    unknown = [env_id for env_id in env_ids or () if env_id not in known]
    if unknown:
        raise ValueError(f"no registered env {unknown[0]!r}; registered: {', '.join(known)}")
    return [env_id for env_id in known if env_ids is None or env_id in env_ids]


def _from_families(field: str, env_ids: Sequence[str] | None) -> list[str]:
    from agents.training_material import training_material

    return [
        text for env_id in _chosen(env_ids) for text in (getattr(training_material(env_id), field) or list)()
    ]


def _tokenizer(
    vocab_size: int,
    audio: bool = False,
    whole_instructions: bool = False,
    tool_calling: bool = False,
    env_ids: Sequence[str] | None = None,
):
    from tokenizers import AddedToken, ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    special = SPECIAL_TOKENS + (AUDIO_TOKENS if audio else []) + (TOOL_SPECIAL_TOKENS if tool_calling else [])
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus(env_ids), vocab_size=vocab_size, min_frequency=1, special_tokens=special)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>" if tool_calling else "<|endoftext|>",
        pad_token="<|pad|>",
        bos_token="<|endoftext|>",
    )
    if tool_calling:  # plain added tokens: decoding keeps them, so TRL's parser sees the tags
        tokenizer.add_tokens([AddedToken(tag, normalized=False) for tag in TOOL_TAGS])
    if audio:
        tokenizer.add_special_tokens({"additional_special_tokens": AUDIO_TOKENS})
    if tool_calling:
        tokenizer.chat_template = _tool_chat_template()
    if whole_instructions:  # matched verbatim before BPE; decoding writes the text back
        fixed = fixed_instructions(env_ids)
        if tool_calling:
            fixed += (
                tool_system_blocks(tokenizer, env_ids) + tool_call_frames(env_ids) + fixed_phrases(env_ids)
            )
        tokenizer.add_tokens([AddedToken(text, normalized=False) for text in fixed])
    return tokenizer


def tool_call_frames(env_ids: Sequence[str] | None = None) -> list[str]:
    """Every registered env's (or ``env_ids``') tool calls as the chat template writes them between the tags, cut
    into their fixed parts: a call without arguments whole (``\n{"name": "ask", "arguments": {}}\n``),
    a call with arguments up to its first value (``\n{"name": "recommend", "arguments": {"option": ``)
    and the ends after a last value (``}}\n``, ``"}}\n``). One token each: choosing a tool is one
    token, and a call is three to five with its tags.

    The tags stay tokens of their own: transformers' response parser (which TRL's tool loop uses)
    matches ``<tool_call>`` and ``</tool_call>`` only as those token ids and treats their spelling
    inside another token as text, so a frame that swallowed a tag would hide every call."""
    from transformers.utils import get_json_schema

    from hear_gym.integrations.trl import environment_factory, offered_tools

    close = "}}\n"
    frames = []
    for env_id in _chosen(env_ids):
        for method in offered_tools(environment_factory(env_id)()):
            schema = get_json_schema(method)["function"]
            head = '\n{"name": "' + schema["name"] + '", "arguments": {'
            first = next(iter(schema["parameters"].get("properties", {})), None)
            frames.append(head + close if first is None else head + '"' + first + '": ')
    return [*dict.fromkeys(frames), close, '"' + close]


def tool_system_blocks(tokenizer, env_ids: Sequence[str] | None = None) -> list[str]:
    """Each registered env's (or ``env_ids``') system turn under a tool-calling chat template, as TRL's
    ``environment_factory`` renders it (the tool set's instruction and every tool's JSON schema):
    fixed text, one token of a ``whole_instructions`` vocabulary, so a tool chat's prompt costs a
    small model its observation, not its thousand-token tool inventory."""
    from hear_gym.integrations.trl import environment_factory, offered_tools, tool_set

    start, end = "<|im_start|>system\n", "<|im_end|>"
    blocks = []
    for env_id in _chosen(env_ids):
        system = [{"role": "system", "content": tool_set(env_id).instruction}]
        text = tokenizer.apply_chat_template(
            system, tools=offered_tools(environment_factory(env_id)()), tokenize=False
        )
        blocks.append(text[text.index(start) + len(start) : text.index(end)])
    return blocks


def _text_config(tokenizer, hidden: int, layers: int):
    from transformers import Qwen2Config

    return Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )


# A model SFT and GRPO can teach on CPU in minutes (tests/training/test_llm_learning.py).
LEARNING_LM = {"hidden": 128, "layers": 4, "whole_instructions": True}
# The same model with a tool-calling chat template, each family's tool system turn one token
# (tests/training/test_dialogue_learning.py).
LEARNING_TOOL_LM = {**LEARNING_LM, "tool_calling": True}


def build_tiny_causal_lm(
    out_dir: Path,
    vocab_size: int = 2048,
    hidden: int = 64,
    layers: int = 2,
    seed: int = 0,
    whole_instructions: bool = False,
    tool_calling: bool = False,
    env_ids: Sequence[str] | None = None,
) -> Path:
    """``tool_calling``: Qwen2.5's chat template (TRL's copy, which TRL can parse tool calls
    under) and its turn and tool tokens, for TRL's ``environment_factory``. ``env_ids``: the
    vocabulary learns those envs' text only (default: every family's), so a learning test's model
    is not re-drawn when another family's text changes."""
    import torch
    from transformers import Qwen2ForCausalLM

    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(
        vocab_size, whole_instructions=whole_instructions, tool_calling=tool_calling, env_ids=env_ids
    )
    if not tool_calling:
        tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(out_dir)
    config = _text_config(tokenizer, hidden, layers)
    # transformers draws initial weights from torch's default generator: seed it inside a fork,
    # so the caller's global RNG state is left as it was.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        Qwen2ForCausalLM(config).save_pretrained(out_dir)
    return out_dir


def _tool_chat_template() -> str:
    from trl.chat_template_utils import qwen2_5_chat_template

    return qwen2_5_chat_template


def build_tiny_audio_lm(out_dir: Path, vocab_size: int = 2048, hidden: int = 64, seed: int = 0) -> Path:
    """A Qwen2-Audio-shaped model (1-layer audio encoder on 32 mel bins, tiny Qwen2 decoder) and
    its processor (Whisper feature extractor, the tokenizer with audio tokens, a chat template)."""
    import torch
    from transformers import (
        Qwen2AudioConfig,
        Qwen2AudioForConditionalGeneration,
        Qwen2AudioProcessor,
        WhisperFeatureExtractor,
    )
    from transformers.models.qwen2_audio.configuration_qwen2_audio import Qwen2AudioEncoderConfig

    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = _tokenizer(vocab_size, audio=True)
    processor = Qwen2AudioProcessor(
        feature_extractor=WhisperFeatureExtractor(feature_size=32, sampling_rate=16_000),
        tokenizer=tokenizer,
        chat_template=AUDIO_CHAT_TEMPLATE,
    )
    processor.save_pretrained(out_dir)
    encoder = Qwen2AudioEncoderConfig(
        num_mel_bins=32,
        encoder_layers=1,
        encoder_attention_heads=2,
        encoder_ffn_dim=2 * hidden,
        d_model=32,
        max_source_positions=1500,
    )
    config = Qwen2AudioConfig(
        audio_config=encoder,
        text_config=_text_config(tokenizer, hidden, 2),
        audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"),
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        Qwen2AudioForConditionalGeneration(config).save_pretrained(out_dir)
    return out_dir


def build_tiny_speech_encoder(out_dir: Path, hidden: int = 32, seed: int = 0) -> Path:
    """A randomly initialized WavLM (2 transformer layers of width ``hidden``) and its feature
    extractor, saved like a real speech encoder. Its convolutional front end has a real WavLM's
    seven layers, kernels and strides (320x downsampling, 20 ms frames at 16 kHz), only narrow:
    frame counts, and so the cost of every consumer, are those of the real model."""
    import torch
    from transformers import Wav2Vec2FeatureExtractor, WavLMConfig, WavLMModel

    out_dir.mkdir(parents=True, exist_ok=True)
    Wav2Vec2FeatureExtractor(
        feature_size=1, sampling_rate=16_000, return_attention_mask=True
    ).save_pretrained(out_dir)
    config = WavLMConfig(
        hidden_size=hidden,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        conv_dim=(hidden,) * 7,
        conv_stride=(5, 2, 2, 2, 2, 2, 2),
        conv_kernel=(10, 3, 3, 3, 3, 2, 2),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        num_buckets=32,
        max_bucket_distance=100,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        WavLMModel(config).save_pretrained(out_dir)
    return out_dir
