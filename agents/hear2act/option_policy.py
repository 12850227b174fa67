"""A Hear2Act PPO policy that scores every option with one shared function (``--policy per_option``).

The plain ``MultiInputPolicy`` maps the flattened observation to 22 logits, so "recommend option
k when its row says it fits" must be learned 11 times over, once per output unit, from a sparse
reward. Here the 11 recommend logits come from one small network applied to each option's row
(its ``options`` columns, its ``option_fit`` row when the access condition has one, whether it
is the current option and whether it was recommended), together with the policy's latent of
the whole observation. Permuting two options' rows swaps their recommend logits; nothing else
about the option has to be learned per slot. The other 11 actions (ask, clarify, confirm) and
the value come from the latent, as in the plain policy.

``--policy per_option_listening`` adds a listening head: the confirm logit also gets a term from
a small network over the turn's audio leaves alone (``prosody``, ``prosody_vs_request``), so
"confirm when the user sounds genuinely satisfied" has a path of its own instead of sharing the
latent's 64 units with everything else. Its output layer starts at zero, so the policy starts as
``per_option`` does, and it may start from a ``per_option`` checkpoint (``--init-from``).

In SB3's terms (sb3-contrib ``MaskableMultiInputActorCriticPolicy``, subclassed):

* ``OptionRowsExtractor``: the flattened observation (as SB3's ``CombinedExtractor`` without
  sub-networks), followed by the option rows (and, listening, the audio leaves);
* ``OptionLatent``: SB3's ``MlpExtractor`` (tanh MLPs for the policy and the value) on the
  flattened part; the policy latent carries the option rows (and audio) along;
* ``OptionHead``: the action net, assembling the logits in the env's action order.
"""

from __future__ import annotations

from functools import partial

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, MlpExtractor
from torch import nn

from hear_gym.envs.hear2act.actions import CONFIRM, N_ACTIONS, RECOMMEND0
from hear_gym.envs.hear2act.features import FIT_COLUMNS, OPTION_COLUMNS
from hear_gym.envs.hear2act.scenarios.model import N_CANDIDATES

SCORE_WIDTH = 64
LISTEN_WIDTH = 32
REQUIRED_LEAVES = ("dialogue", "options")
AUDIO_LEAVES = ("prosody", "prosody_vs_request")  # what the listening head hears
# the dialogue leaf: [turn fraction, current option one-hot (11), recommended so far (11), ...]
CURRENT = slice(1, 1 + N_CANDIDATES)
RECOMMENDED = slice(1 + N_CANDIDATES, 1 + 2 * N_CANDIDATES)


def row_width(space: gym.spaces.Dict) -> int:
    return OPTION_COLUMNS + (FIT_COLUMNS if "option_fit" in space.spaces else 0) + 2


class OptionRowsExtractor(BaseFeaturesExtractor):
    """``[flattened observation, option rows]``; the rows are ``N_CANDIDATES x row_width``. With
    ``listen``, the audio leaves follow (``audio_dim`` numbers)."""

    def __init__(self, observation_space: gym.spaces.Dict, listen: bool = False) -> None:
        leaves = observation_space.spaces
        self.flat_dim = sum(int(np.prod(leaf.shape)) for leaf in leaves.values())
        self.row_width = row_width(observation_space)
        self.audio_dim = sum(int(np.prod(leaves[key].shape)) for key in AUDIO_LEAVES) if listen else 0
        super().__init__(observation_space, self.flat_dim + N_CANDIDATES * self.row_width + self.audio_dim)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        flat = torch.cat([observations[key].flatten(1) for key in self._observation_space.spaces], dim=1)
        batch = flat.shape[0]
        parts = [observations["options"].reshape(batch, N_CANDIDATES, OPTION_COLUMNS)]
        if "option_fit" in observations:  # 11 rows, then the current option's row again
            parts.append(observations["option_fit"].reshape(batch, N_CANDIDATES + 1, FIT_COLUMNS)[:, :-1])
        dialogue = observations["dialogue"]
        parts += [dialogue[:, CURRENT].unsqueeze(-1), dialogue[:, RECOMMENDED].unsqueeze(-1)]
        audio = [observations[key].flatten(1) for key in AUDIO_LEAVES] if self.audio_dim else []
        return torch.cat([flat, torch.cat(parts, dim=-1).flatten(1), *audio], dim=1)


class OptionLatent(MlpExtractor):
    """SB3's ``MlpExtractor`` on the flattened part of the features (the same tanh MLPs, the same
    layer names), whose policy latent carries the rest (option rows, audio) along:
    ``[MLP(flat), carried]``."""

    def __init__(self, flat_dim: int, carried_dim: int, net_arch: list[int] | dict[str, list[int]]) -> None:
        super().__init__(flat_dim, net_arch, nn.Tanh)
        self.flat_dim = flat_dim
        self.hidden_dim_pi = self.latent_dim_pi  # the scorer's context width, before the rows
        self.latent_dim_pi += carried_dim

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        flat, carried = features[:, : self.flat_dim], features[:, self.flat_dim :]
        return torch.cat([super().forward_actor(flat), carried], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return super().forward_critic(features[:, : self.flat_dim])


class OptionHead(nn.Module):
    """The action net: recommend logits from the shared row scorer, the rest from the latent;
    with ``audio_dim``, the confirm logit also gets the listening head's term."""

    def __init__(self, hidden: int, row_width: int, audio_dim: int = 0) -> None:
        super().__init__()
        self.hidden, self.row_width = hidden, row_width
        self.other = nn.Linear(hidden, N_ACTIONS - N_CANDIDATES)
        self.score = nn.Sequential(
            nn.Linear(hidden + row_width, SCORE_WIDTH), nn.Tanh(), nn.Linear(SCORE_WIDTH, 1)
        )
        self.listen = (
            nn.Sequential(nn.Linear(audio_dim, LISTEN_WIDTH), nn.Tanh(), nn.Linear(LISTEN_WIDTH, 1))
            if audio_dim
            else None
        )

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        rows_end = self.hidden + N_CANDIDATES * self.row_width
        context, rows, audio = (
            latent[:, : self.hidden],
            latent[:, self.hidden : rows_end],
            latent[:, rows_end:],
        )
        rows = rows.reshape(-1, N_CANDIDATES, self.row_width)
        paired = torch.cat([context.unsqueeze(1).expand(-1, N_CANDIDATES, -1), rows], dim=-1)
        recommend = self.score(paired).squeeze(-1)
        other = self.other(context)
        logits = torch.cat([other[:, :RECOMMEND0], recommend, other[:, RECOMMEND0:]], dim=1)
        if self.listen is None:
            return logits
        confirm = logits.new_zeros(N_ACTIONS)
        confirm[CONFIRM] = 1.0
        return logits + self.listen(audio) * confirm


class PerOptionPolicy(MaskableMultiInputActorCriticPolicy):
    """``MaskableMultiInputActorCriticPolicy`` with the option rows and the shared scorer; takes
    the same ``net_arch`` list (the policy and value MLPs)."""

    def __init__(
        self, observation_space: gym.spaces.Dict, action_space: gym.spaces.Discrete, *args, **kwargs
    ):
        type(self).check_spaces(observation_space, action_space)
        kwargs["features_extractor_class"] = OptionRowsExtractor
        super().__init__(observation_space, action_space, *args, **kwargs)

    @staticmethod
    def check_spaces(observation_space: gym.spaces.Space, action_space: gym.spaces.Space) -> None:
        """Refuse an env that is not Hear2Act's feature observation and action set."""
        leaves = getattr(observation_space, "spaces", {})
        missing = [leaf for leaf in REQUIRED_LEAVES if leaf not in leaves]
        if missing or getattr(action_space, "n", None) != N_ACTIONS:
            raise ValueError(
                f"the per_option policy needs Hear2Act's feature leaves {list(REQUIRED_LEAVES)} and "
                f"{N_ACTIONS} actions; this env has leaves {sorted(leaves)} and {action_space}"
            )

    def _build_mlp_extractor(self) -> None:
        extractor = self.features_extractor
        carried = N_CANDIDATES * extractor.row_width + extractor.audio_dim
        self.mlp_extractor = OptionLatent(extractor.flat_dim, carried, self.net_arch)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)  # the plain linear action net, then replaced with the head
        extractor = self.features_extractor
        head = OptionHead(self.mlp_extractor.hidden_dim_pi, extractor.row_width, extractor.audio_dim)
        self.action_net = head
        if self.ortho_init:  # as SB3 initialises: hidden layers sqrt(2), output layers 0.01
            self.action_net.score[0].apply(partial(self.init_weights, gain=np.sqrt(2)))
            for output in (self.action_net.other, self.action_net.score[-1]):
                output.apply(partial(self.init_weights, gain=0.01))
        if head.listen is not None:  # starts silent: the policy starts as per_option does
            head.listen[0].apply(partial(self.init_weights, gain=np.sqrt(2)))
            nn.init.zeros_(head.listen[-1].weight)
            nn.init.zeros_(head.listen[-1].bias)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)


class ListeningOptionPolicy(PerOptionPolicy):
    """``PerOptionPolicy`` with the listening head on the confirm logit (``AUDIO_LEAVES``)."""

    def __init__(
        self, observation_space: gym.spaces.Dict, action_space: gym.spaces.Discrete, *args, **kwargs
    ):
        kwargs["features_extractor_kwargs"] = {"listen": True}
        super().__init__(observation_space, action_space, *args, **kwargs)

    @staticmethod
    def check_spaces(observation_space: gym.spaces.Space, action_space: gym.spaces.Space) -> None:
        PerOptionPolicy.check_spaces(observation_space, action_space)
        missing = [leaf for leaf in AUDIO_LEAVES if leaf not in observation_space.spaces]
        if missing:
            raise ValueError(
                f"the per_option_listening policy hears the audio leaves {list(AUDIO_LEAVES)}: train it "
                "under access A or A+T (per_option is the same policy without them)"
            )
