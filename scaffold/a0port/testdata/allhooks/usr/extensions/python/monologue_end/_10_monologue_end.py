from helpers.extension import Extension
from agent import LoopData


class MonologueEnd(Extension):
    """Counts its calls at monologue_end in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("monologue_end_calls") or 0) + 1
        self.agent.set_data("monologue_end_calls", n)
