"""Post-training chat and audio models on hear_gym envs with TRL: SFT on demonstrations, GRPO
(plain, paired-group and dialogue) and their audio variants, one trainer per file."""
