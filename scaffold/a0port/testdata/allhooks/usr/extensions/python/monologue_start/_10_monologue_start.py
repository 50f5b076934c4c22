from helpers.extension import Extension
from agent import LoopData


class MonologueStart(Extension):
    """Counts its calls at monologue_start in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("monologue_start_calls") or 0) + 1
        self.agent.set_data("monologue_start_calls", n)
