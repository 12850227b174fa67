"""Paired-group GRPO (VoxGate, Eq. 1): one advantage group per counterfactual pair.

For a pair q = (x+, x-) (VoiceGate: the same words as a same-speaker command, target the tool,
and as a switched command, target ``[Mute]``), the first K/2 completions of a group answer x+
and the last K/2 answer x-. Rewards are normalized across both sides together::

    A_qi = (r_qi - mean_q) / (std_q + eps)

so the update depends on whether the policy separates the pair, not on how hard one prompt is.
Groups whose K rewards are all equal carry no signal and are dropped from the update: their
advantages are zero and their tokens leave the loss and its token count (``loss_type="dapo"``
normalizes by the tokens that remain). The dropped fraction is logged.

Dataset rows hold ``prompt`` / ``item_id`` (x+) and ``prompt_minus`` / ``item_id_minus`` (x-); a
row that is not a pair repeats its own prompt and item there, and is then an ordinary group. Every
column ``c`` with a ``c_minus`` partner is swapped for the x- side, so rows of TRL's
``environment_factory`` (``hear_gym.integrations.trl``) pair the same way through
``item_id`` / ``item_id_minus``: the env's ``reset(**row)`` then starts the x- episode.
vLLM's server mode samples all completions of a group from one prompt, which breaks pairing;
it is refused. Colocate mode generates from the rows as given and keeps pairs.
"""

from __future__ import annotations

from typing import Any

import torch
from trl import GRPOTrainer

EPSILON = 1e-4  # TRL's own in the group normalization
MINUS = "_minus"  # the suffix of a column that holds the x- side of the column it extends


def paired_advantages(rewards: torch.Tensor, group_size: int, eps: float = EPSILON):
    """Eq. 1 over consecutive groups of ``group_size`` rewards (both sides of a pair).

    Returns (advantages, kept): ``kept[i]`` is False for every completion of a group whose
    rewards are all equal (then its advantage is 0). The standard deviation is the sample one
    (Bessel-corrected), as TRL computes it for ordinary groups."""
    if group_size < 2 or group_size % 2:
        raise ValueError(f"paired groups need an even size >= 2, got {group_size}")
    if rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards do not form groups of {group_size}")
    grouped = rewards.view(-1, group_size)
    mean = grouped.mean(dim=1, keepdim=True)
    std = grouped.std(dim=1, keepdim=True)
    varied = grouped.max(dim=1).values != grouped.min(dim=1).values  # exact, no float tolerance
    advantages = torch.where(varied.unsqueeze(1), (grouped - mean) / (std + eps), torch.zeros_like(grouped))
    kept = varied.repeat_interleave(group_size)
    return advantages.reshape(-1), kept


def minus_side(row: dict[str, Any]) -> dict[str, Any]:
    """The row as its x- side: every column with a ``*_minus`` partner takes the partner's value."""
    return {
        **row,
        **{column[: -len(MINUS)]: value for column, value in row.items() if column.endswith(MINUS)},
    }


class PairedGRPOTrainer(GRPOTrainer):
    """``GRPOTrainer`` whose groups hold K/2 completions of each side of a pair (see module)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.num_generations % 2:
            raise ValueError(
                f"paired GRPO needs an even num_generations (K/2 per side), got {self.num_generations}"
            )
        if self.use_vllm and self.vllm_mode == "server":
            raise ValueError(
                "paired GRPO cannot use vLLM server mode: the server samples every completion of a "
                "group from one prompt, so a group could not hold both sides of a pair; use "
                "vllm_mode='colocate' or generate with transformers"
            )
        self._rewards: torch.Tensor | None = None

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        weights = self.reward_weights.to(rewards_per_func.device).unsqueeze(0)
        self._rewards = (rewards_per_func * weights).nansum(dim=1)  # all processes, in order
        return rewards_per_func

    def _generate_and_score_completions(self, inputs):
        k = self.num_generations
        offset = self.accelerator.process_index * len(inputs)  # rows are this process's slice
        inputs = [minus_side(row) if (offset + i) % k >= k // 2 else row for i, row in enumerate(inputs)]
        output = super()._generate_and_score_completions(inputs)
        advantages, kept = paired_advantages(self._rewards, k)
        local = slice(offset, offset + len(inputs))
        device = output["advantages"].device
        output["advantages"] = advantages[local].to(device)
        keep = kept[local].to(device).unsqueeze(1).to(output["completion_mask"].dtype)
        output["tool_mask"] = output.get("tool_mask", torch.ones_like(output["completion_mask"])) * keep
        loss_mask = output["completion_mask"] * output["tool_mask"]
        output["num_items_in_batch"] = self.accelerator.gather(loss_mask.sum()).sum()
        mode = "train" if self.model.training else "eval"
        self._metrics[mode]["paired/dropped_group_fraction"].append(1.0 - kept.float().mean().item())
        return output
