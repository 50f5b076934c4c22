from helpers.extension import Extension
from agent import LoopData


class MessageLoopStart(Extension):
    """Counts its calls at message_loop_start in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("message_loop_start_calls") or 0) + 1
        self.agent.set_data("message_loop_start_calls", n)
