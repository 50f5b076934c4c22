from helpers.extension import Extension
from agent import LoopData


class ToolOutputUpdate(Extension):
    """Counts its calls at tool_output_update in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("tool_output_update_calls") or 0) + 1
        self.agent.set_data("tool_output_update_calls", n)
