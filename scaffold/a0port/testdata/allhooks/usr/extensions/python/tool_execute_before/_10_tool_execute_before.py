from helpers.extension import Extension
from agent import LoopData


class ToolExecuteBefore(Extension):
    """Counts its calls at tool_execute_before in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("tool_execute_before_calls") or 0) + 1
        self.agent.set_data("tool_execute_before_calls", n)
        kwargs["tool_args"]["a0_seen"] = kwargs.get("tool_name", "")
