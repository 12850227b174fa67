"""A deliberately slow agent for process tests (importable by spawned workers).

On its first act in a process it leaves a marker file ``started-<pid>`` in ``$SLOW_AGENT_MARKERS``
so that a test knows the worker is past its start-up and playing."""

import os
import time
from pathlib import Path

from agents.random_agent import RandomAgent


class SlowRandomAgent(RandomAgent):
    def act(self, observation):
        marker = Path(os.environ["SLOW_AGENT_MARKERS"]) / f"started-{os.getpid()}"
        if not marker.exists():
            marker.touch()
        time.sleep(0.05)
        return super().act(observation)
