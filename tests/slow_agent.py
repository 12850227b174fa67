"""A deliberately slow agent for process tests (importable by spawned workers)."""

import time

from agents.random_agent import RandomAgent


class SlowRandomAgent(RandomAgent):
    def act(self, observation):
        time.sleep(0.05)
        return super().act(observation)
