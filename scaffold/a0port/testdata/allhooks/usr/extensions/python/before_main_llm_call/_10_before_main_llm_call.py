from helpers.extension import Extension
from agent import LoopData


class BeforeMainLlmCall(Extension):
    """Counts its calls at before_main_llm_call in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("before_main_llm_call_calls") or 0) + 1
        self.agent.set_data("before_main_llm_call_calls", n)
