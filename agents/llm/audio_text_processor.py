"""A checkpoint's audio-and-text processing without its vision parts, for the audio-language
checkpoints whose processor transformers builds only with torchvision (Qwen2.5-Omni: its video
processor needs it; PyPI's torchvision wheels do not import beside a CPU build of torch).

``AudioTextProcessor`` is the checkpoint's tokenizer, its Whisper feature extractor and its chat
template in transformers' ``Qwen2AudioProcessor``, which expands each audio placeholder to as many
tokens as the clip's encoder frames (``(((frames - 1) // 2 + 1) - 2) // 2 + 1``) after padding it
to the 30 s window: the rule Qwen2.5-Omni's processor applies to audio too. Saving it copies the
checkpoint's own processor files, so a folder a trainer writes loads with the checkpoint's
processor wherever torchvision is installed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from transformers import AutoTokenizer, Qwen2AudioProcessor, WhisperFeatureExtractor

# the processor and tokenizer files a checkpoint ships
PROCESSOR_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "merges.txt",
    "special_tokens_map.json",
    "added_tokens.json",
    "chat_template.json",
    "chat_template.jinja",
    "preprocessor_config.json",
    "processor_config.json",
    "video_preprocessor_config.json",
)


class AudioTextProcessor(Qwen2AudioProcessor):
    source: str = ""  # the checkpoint whose processor files ``save_pretrained`` copies

    @classmethod
    def from_checkpoint(cls, source: str) -> AudioTextProcessor:
        tokenizer = AutoTokenizer.from_pretrained(source)
        processor = cls(
            feature_extractor=WhisperFeatureExtractor.from_pretrained(source),
            tokenizer=tokenizer,
            chat_template=tokenizer.chat_template or chat_template(source),
            audio_token=getattr(tokenizer, "audio_token", "<|AUDIO|>"),
            audio_bos_token=getattr(tokenizer, "audio_bos_token", "<|audio_bos|>"),
            audio_eos_token=getattr(tokenizer, "audio_eos_token", "<|audio_eos|>"),
        )
        processor.source = source
        return processor

    def save_pretrained(self, save_directory, **kwargs):
        folder = Path(save_directory)
        folder.mkdir(parents=True, exist_ok=True)
        for file in PROCESSOR_FILES:
            if (Path(self.source) / file).is_file():
                shutil.copy2(Path(self.source) / file, folder / file)
        return [str(folder)]


def chat_template(source: str) -> str | None:
    """The chat template a checkpoint ships beside its tokenizer (``chat_template.jinja`` or
    ``chat_template.json``), if any."""
    folder = Path(source)
    if (folder / "chat_template.jinja").is_file():
        return (folder / "chat_template.jinja").read_text(encoding="utf-8")
    if (folder / "chat_template.json").is_file():
        return json.loads((folder / "chat_template.json").read_text(encoding="utf-8"))["chat_template"]
    return None
