from helpers.extension import Extension
from agent import LoopData


class ReasoningStream(Extension):
    """Counts its calls at reasoning_stream in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("reasoning_stream_calls") or 0) + 1
        self.agent.set_data("reasoning_stream_calls", n)
        self.agent.set_data("reasoning_stream_text", kwargs.get("text", ""))
