from helpers.extension import Extension
from agent import LoopData


class ToolReport(Extension):
    """Tells the model what the tool-side files noted."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        a = self.agent
        loop_data.extras_temporary["a0_tools"] = (
            f"A0-TOOLS write={a.get_data('last_write')} patch={a.get_data('last_patch')} "
            f"reembed={a.get_data('reembed')} ends={a.get_data('thought_ends')}")
