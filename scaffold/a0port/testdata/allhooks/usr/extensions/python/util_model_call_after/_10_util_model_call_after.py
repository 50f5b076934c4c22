from helpers.extension import Extension
from agent import LoopData


class UtilModelCallAfter(Extension):
    """Counts its calls at util_model_call_after in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("util_model_call_after_calls") or 0) + 1
        self.agent.set_data("util_model_call_after_calls", n)
        kwargs["call_data"]["response"] = str(kwargs["call_data"].get("response", "")) + " (A0)"
