from helpers.extension import Extension
from agent import LoopData


class OrchestrationMode(Extension):
    """Adds delegation advice while the prompt is built: it reaches the model."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        if self.agent.get_data("domain") == "code":
            loop_data.extras_temporary["orchestration"] = "delegate the fix to a subordinate"
