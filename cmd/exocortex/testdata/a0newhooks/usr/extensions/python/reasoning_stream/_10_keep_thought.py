from helpers.extension import Extension
from agent import LoopData


class KeepThought(Extension):
    """Agent Zero hands the reasoning streamed so far."""

    async def execute(self, loop_data=LoopData(), text="", **kwargs):
        self.agent.set_data("thought", text.strip()[:40])
