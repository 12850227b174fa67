"""Registered env ids, each naming its family's ``EnvFamily`` by import string only (nothing is
imported here; ``hear_gym.core.registry`` resolves them when asked). A new family adds one line."""

FAMILIES: dict[str, str] = {
    "hear_gym/Hear2Act-v0": "hear_gym.envs.hear2act.family:FAMILY",
    "hear_gym/VoiceGate-v0": "hear_gym.envs.voicegate.family:FAMILY",
    "hear_gym/Onset-v0": "hear_gym.envs.onset.family:FAMILY",
    "hear_gym/DeliveryPlan-v0": "hear_gym.envs.deliveryplan.family:FAMILY",
    "hear_gym/Ambiguity-v0": "hear_gym.envs.ambiguity.family:FAMILY",
}
ENV_IDS = tuple(FAMILIES)
