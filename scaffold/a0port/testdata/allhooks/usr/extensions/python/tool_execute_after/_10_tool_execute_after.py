from helpers.extension import Extension
from agent import LoopData


class ToolExecuteAfter(Extension):
    """Counts its calls at tool_execute_after in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("tool_execute_after_calls") or 0) + 1
        self.agent.set_data("tool_execute_after_calls", n)
        kwargs["response"].message = kwargs["response"].message + " (A0 after)"
