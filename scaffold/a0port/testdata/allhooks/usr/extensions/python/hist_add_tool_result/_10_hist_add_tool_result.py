from helpers.extension import Extension
from agent import LoopData


class HistAddToolResult(Extension):
    """Counts its calls at hist_add_tool_result in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("hist_add_tool_result_calls") or 0) + 1
        self.agent.set_data("hist_add_tool_result_calls", n)
