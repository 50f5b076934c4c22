from helpers.extension import Extension
from agent import LoopData


class ErrorFormat(Extension):
    """Counts its calls at error_format in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("error_format_calls") or 0) + 1
        self.agent.set_data("error_format_calls", n)
        kwargs["msg"]["message"] = "A0: " + str(kwargs["msg"].get("message", ""))
