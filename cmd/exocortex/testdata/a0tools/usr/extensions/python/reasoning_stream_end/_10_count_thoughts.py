from helpers.extension import Extension
from agent import LoopData


class CountThoughts(Extension):
    """Counts the model calls whose reasoning stream ended."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        self.agent.set_data("thought_ends", (self.agent.get_data("thought_ends") or 0) + 1)
