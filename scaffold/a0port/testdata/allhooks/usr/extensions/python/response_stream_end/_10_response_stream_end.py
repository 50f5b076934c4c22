from helpers.extension import Extension
from agent import LoopData


class ResponseStreamEnd(Extension):
    """Counts its calls at response_stream_end in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("response_stream_end_calls") or 0) + 1
        self.agent.set_data("response_stream_end_calls", n)
