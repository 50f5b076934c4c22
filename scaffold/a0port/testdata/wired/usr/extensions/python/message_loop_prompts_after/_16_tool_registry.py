from helpers.extension import Extension
from agent import LoopData


class ToolRegistry(Extension):
    """Lists the custom tools, and the last error's diagnosis if any."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        loop_data.extras_temporary["custom_tools"] = "[CUSTOM TOOLS] none installed"
        diagnosis = self.agent.get_data("error_diagnosis")
        if diagnosis:
            loop_data.extras_temporary["diagnosis"] = diagnosis
