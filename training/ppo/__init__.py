"""PPO on hear_gym envs: settings, env construction, the SB3 learner (``train``), the RLlib
learner (``rllib``), the learning curve, exact resume and the run folder."""
