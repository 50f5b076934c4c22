from helpers.extension import Extension
from agent import LoopData


class Measure(Extension):
    """Agent Zero hands the text streamed so far."""

    async def execute(self, loop_data=LoopData(), text="", **kwargs):
        self.agent.set_data("streamed", len(text))
