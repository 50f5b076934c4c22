from helpers.extension import Extension
from agent import LoopData


class UtilModelCallBefore(Extension):
    """Counts its calls at util_model_call_before in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("util_model_call_before_calls") or 0) + 1
        self.agent.set_data("util_model_call_before_calls", n)
        kwargs["call_data"]["system"] = str(kwargs["call_data"].get("system", "")) + " (A0)"
