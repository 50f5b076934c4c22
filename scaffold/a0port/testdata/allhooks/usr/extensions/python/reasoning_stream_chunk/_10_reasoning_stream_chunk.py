from helpers.extension import Extension
from agent import LoopData


class ReasoningStreamChunk(Extension):
    """Counts its calls at reasoning_stream_chunk in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("reasoning_stream_chunk_calls") or 0) + 1
        self.agent.set_data("reasoning_stream_chunk_calls", n)
        kwargs["stream_data"]["chunk"] = str(kwargs["stream_data"].get("chunk", "")).upper()
