from helpers.extension import Extension
from agent import LoopData


class OrchestrationGate(Extension):
    """Adds delegation advice where the prompt is already built (seam 7)."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        if self.agent.get_data("domain") == "code":
            loop_data.extras_temporary["orchestration"] = "delegate the fix to a subordinate"
