from helpers.extension import Extension
from agent import LoopData


class MessageLoopException(Extension):
    """Counts its calls at message_loop_exception in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("message_loop_exception_calls") or 0) + 1
        self.agent.set_data("message_loop_exception_calls", n)
        kwargs["exception_data"]["exception"] = None
