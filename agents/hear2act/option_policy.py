"""A Hear2Act PPO policy that scores every option with one shared function (``--policy per_option``).

The plain ``MultiInputPolicy`` maps the flattened observation to 22 logits, so "recommend option
k when its row says it fits" must be learned 11 times over, once per output unit, from a sparse
reward. Here the 11 recommend logits come from one small network applied to each option's row
(its ``options`` columns, its ``option_fit`` row when the access condition has one, whether it
is the current option and whether it was recommended), together with a context that does not
depend on the options' order: the observation less its option-indexed parts, the current
option's row, and the mean and maximum over the options of a learned embedding of their rows.
The policy is permutation equivariant end to end: permuting the options in the observation
(every option-indexed leaf and the action mask) permutes the recommend logits and leaves the
other logits and the value as they were; nothing about an option is learned per slot. The other
11 actions (ask, clarify, confirm) and the value come from the context's latent.

``--policy per_option_privileged`` is ``per_option`` with an asymmetric critic: in training its
value network also reads the hidden concern state of the user's latest turn
(``agents.hear2act.concern_state``, the training envs' ``agents.ppo.PRIVILEGED_LEAF``), so the
advantages that teach the actor when to confirm are measured against a baseline that knows
whether the user was satisfied. The actor's path never reads that leaf (tested), and a
checkpoint plays without it: the critic then reads zeros, which no action depends on.

``--policy per_option_listening`` adds a listening head: the confirm logit also gets a term from
a small network over the turn's audio leaves alone (``prosody``, ``prosody_vs_request``), so
"confirm when the user sounds genuinely satisfied" has a path of its own instead of sharing the
latent's 64 units with everything else. Its output layer starts at zero, so the policy starts as
``per_option`` does, and it may start from a ``per_option`` checkpoint (``--init-from``).

In SB3's terms (sb3-contrib ``MaskableMultiInputActorCriticPolicy``, subclassed):

* ``OptionRowsExtractor``: the observation's order-free part, followed by the option rows
  (and, listening, the audio leaves);
* ``OptionLatent``: the context (the order-free part and the pooled row embeddings), and
  SB3's ``MlpExtractor`` (tanh MLPs for the policy and the value) on it; the policy latent
  carries the option rows (and audio) along;
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

from agents.hear2act.concern_state import CONCERN_SIZE
from agents.ppo import PRIVILEGED_LEAF
from hear_gym.envs.hear2act.actions import CONFIRM, N_ACTIONS, RECOMMEND0
from hear_gym.envs.hear2act.features import FIT_COLUMNS, OPTION_COLUMNS
from hear_gym.envs.hear2act.scenarios.model import N_CANDIDATES

SCORE_WIDTH = 64
LISTEN_WIDTH = 32
POOL_WIDTH = 32  # the row embedding whose mean and maximum over the options join the context
REQUIRED_LEAVES = ("dialogue", "options")
AUDIO_LEAVES = ("prosody", "prosody_vs_request")  # what the listening head hears
# the dialogue leaf: [turn fraction, current option one-hot (11), recommended so far (11), ...]
CURRENT = slice(1, 1 + N_CANDIDATES)
RECOMMENDED = slice(1 + N_CANDIDATES, 1 + 2 * N_CANDIDATES)


def row_width(space: gym.spaces.Dict) -> int:
    return OPTION_COLUMNS + (FIT_COLUMNS if "option_fit" in space.spaces else 0) + 2


class OptionRowsExtractor(BaseFeaturesExtractor):
    """``[order-free part, option rows]``; with ``listen``, the audio leaves follow
    (``audio_dim`` numbers). The rows are ``N_CANDIDATES x row_width``. The order-free part
    (``context_dim`` numbers) is every leaf less its option-indexed parts (``shared_parts``),
    then the current option's row: permuting the options in the observation permutes the rows
    and leaves it as it was. (No parameters: SB3 shares this module between the policy and the
    value under three names, which safetensors refuses for tensors.)"""

    def __init__(self, observation_space: gym.spaces.Dict, listen: bool = False, privileged: int = 0) -> None:
        # the training-only leaf joins the features last, for the critic alone (privileged numbers)
        leaves = {k: leaf for k, leaf in observation_space.spaces.items() if k != PRIVILEGED_LEAF}
        self.keys, self.privileged_dim = tuple(leaves), privileged
        self.row_width = row_width(observation_space)
        # less the rows and the recommend slice of the action mask, plus the current option's row
        total = sum(int(np.prod(leaf.shape)) for leaf in leaves.values())
        self.context_dim = total - N_CANDIDATES * (self.row_width + 1) + self.row_width
        self.audio_dim = sum(int(np.prod(leaves[key].shape)) for key in AUDIO_LEAVES) if listen else 0
        width = self.context_dim + N_CANDIDATES * self.row_width + self.audio_dim + privileged
        super().__init__(observation_space, width)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        rows = option_rows(observations)
        current = (rows * observations["dialogue"][:, CURRENT].unsqueeze(-1)).sum(dim=1)
        audio = [observations[key].flatten(1) for key in AUDIO_LEAVES] if self.audio_dim else []
        shared = shared_parts(observations, self.keys)
        privileged = []
        if self.privileged_dim:  # an evaluation has no such leaf: zeros, read by the critic only
            leaf = observations.get(PRIVILEGED_LEAF)
            privileged = [rows.new_zeros(len(rows), self.privileged_dim) if leaf is None else leaf.flatten(1)]
        return torch.cat([*shared, current, rows.flatten(1), *audio, *privileged], dim=1)


def option_rows(observations: dict[str, torch.Tensor]) -> torch.Tensor:
    """Each option's row (``batch x N_CANDIDATES x row_width``): its ``options`` columns, its
    ``option_fit`` row when the access condition has one, whether it is the current option and
    whether it was recommended."""
    dialogue = observations["dialogue"]
    parts = [observations["options"].reshape(len(dialogue), N_CANDIDATES, OPTION_COLUMNS)]
    if "option_fit" in observations:  # 11 rows, then the current option's row again
        parts.append(observations["option_fit"].reshape(len(dialogue), N_CANDIDATES + 1, FIT_COLUMNS)[:, :-1])
    parts += [dialogue[:, CURRENT].unsqueeze(-1), dialogue[:, RECOMMENDED].unsqueeze(-1)]
    return torch.cat(parts, dim=-1)


def shared_parts(observations: dict[str, torch.Tensor], keys: tuple[str, ...]) -> list[torch.Tensor]:
    """Every leaf, flattened, in the order of ``keys`` (the observation space's: the dict an
    agent passes may list its leaves in another order than SB3's), less its option-indexed
    parts (those are in ``option_rows``, or in the action mask always valid): the same numbers
    whatever the options' order."""
    parts = []
    for key in keys:
        leaf = observations[key].flatten(1)
        if key == "options":
            continue
        if key == "option_fit":
            leaf = leaf[:, N_CANDIDATES * FIT_COLUMNS :]  # the current option's row
        elif key == "dialogue":
            leaf = torch.cat([leaf[:, : CURRENT.start], leaf[:, RECOMMENDED.stop :]], dim=1)
        elif key == "action_mask":
            leaf = torch.cat([leaf[:, :RECOMMEND0], leaf[:, CONFIRM:]], dim=1)
        parts.append(leaf)
    return parts


class OptionLatent(MlpExtractor):
    """SB3's ``MlpExtractor`` (the same tanh MLPs, the same layer names) on the context: the
    order-free part of the features, then the mean and the maximum over the options of a learned
    embedding of each row (``pool``), so the context, the value and every logit but the recommend
    ones stay as they are when the options are permuted. The policy latent carries the rest
    (option rows, audio) along: ``[MLP(context), carried]``."""

    def __init__(
        self,
        order_free_dim: int,
        row_width: int,
        carried_dim: int,
        net_arch: list[int] | dict[str, list[int]],
        privileged_dim: int = 0,
    ) -> None:
        context_dim = order_free_dim + 2 * POOL_WIDTH
        super().__init__(context_dim, net_arch, nn.Tanh)
        self.order_free_dim, self.row_width = order_free_dim, row_width
        self.carried_dim, self.privileged_dim = carried_dim, privileged_dim
        self.pool = nn.Sequential(nn.Linear(row_width, POOL_WIDTH), nn.Tanh())
        self.hidden_dim_pi = self.latent_dim_pi  # the scorer's context width, before the rows
        self.latent_dim_pi += carried_dim
        self.context_dim, self.net_arch = context_dim, net_arch  # the value MLP reads the context
        # (and, with privileged_dim, the privileged numbers: PerOptionPolicy._build widens it)

    def context(self, features: torch.Tensor) -> torch.Tensor:
        rows_end = self.order_free_dim + N_CANDIDATES * self.row_width
        rows = features[:, self.order_free_dim : rows_end].reshape(-1, N_CANDIDATES, self.row_width)
        embedded = self.pool(rows)
        return torch.cat([features[:, : self.order_free_dim], embedded.mean(1), embedded.amax(1)], dim=1)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        carried = features[:, self.order_free_dim : self.order_free_dim + self.carried_dim]
        return torch.cat([super().forward_actor(self.context(features)), carried], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        context = self.context(features)
        if self.privileged_dim:
            context = torch.cat([context, features[:, -self.privileged_dim :]], dim=1)
        return super().forward_critic(context)


def value_mlp(input_dim: int, net_arch: list[int] | dict[str, list[int]]) -> nn.Sequential:
    """SB3's value MLP (``MlpExtractor.value_net``: tanh layers of ``net_arch``) on ``input_dim``."""
    layers, last = [], input_dim
    for width in net_arch.get("vf", []) if isinstance(net_arch, dict) else net_arch:
        layers += [nn.Linear(last, width), nn.Tanh()]
        last = width
    return nn.Sequential(*layers)


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
        self.mlp_extractor = OptionLatent(
            extractor.context_dim, extractor.row_width, carried, self.net_arch, extractor.privileged_dim
        )

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
        latent = self.mlp_extractor
        if latent.privileged_dim:
            # the wider value MLP is drawn aside, so every other weight is drawn as per_option
            # draws it: on one seed the two policies start from the same actor
            with torch.random.fork_rng(devices=[]):
                latent.value_net = value_mlp(latent.context_dim + latent.privileged_dim, latent.net_arch)
                if self.ortho_init:
                    latent.value_net.apply(partial(self.init_weights, gain=np.sqrt(2)))
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


class PrivilegedCriticOptionPolicy(PerOptionPolicy):
    """``PerOptionPolicy`` whose critic also reads the hidden concern state in training (see the
    module); the actor is ``per_option``'s, on the same leaves."""

    def __init__(
        self, observation_space: gym.spaces.Dict, action_space: gym.spaces.Discrete, *args, **kwargs
    ):
        kwargs["features_extractor_kwargs"] = {"privileged": CONCERN_SIZE}
        super().__init__(observation_space, action_space, *args, **kwargs)
