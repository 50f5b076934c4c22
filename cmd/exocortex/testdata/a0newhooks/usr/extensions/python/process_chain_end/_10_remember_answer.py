from helpers.extension import Extension
from agent import LoopData


class RememberAnswer(Extension):
    """Remembers the last answer of the chain for the next task."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        data = kwargs.get("data") or {}
        self.agent.set_data("last_answer", data.get("final_response", ""))
