"""Access conditions, interventions, action and observation formats, layered as wrappers."""

from hear_gym.wrappers.access import ACCESS_CONDITIONS, AccessContext, ConcernStateTag, apply_access
from hear_gym.wrappers.audio import (
    AffectLabel, HideUserWords, InferredState, TurnAudio, UserAudio, voice_for,
)
from hear_gym.wrappers.features import FeatureObservation
from hear_gym.wrappers.interventions import INTERVENTIONS, StateIntervention
from hear_gym.wrappers.text_actions import TextActions

__all__ = ["ACCESS_CONDITIONS", "INTERVENTIONS", "AccessContext", "AffectLabel", "ConcernStateTag",
           "FeatureObservation", "HideUserWords", "InferredState", "StateIntervention", "TextActions",
           "TurnAudio", "UserAudio", "apply_access", "voice_for"]
