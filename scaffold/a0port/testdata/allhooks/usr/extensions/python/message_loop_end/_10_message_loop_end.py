from helpers.extension import Extension
from agent import LoopData


class MessageLoopEnd(Extension):
    """Counts its calls at message_loop_end in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("message_loop_end_calls") or 0) + 1
        self.agent.set_data("message_loop_end_calls", n)
