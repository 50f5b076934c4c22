from helpers.extension import Extension
from agent import LoopData


class HistAddBefore(Extension):
    """Counts its calls at hist_add_before in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("hist_add_before_calls") or 0) + 1
        self.agent.set_data("hist_add_before_calls", n)
        kwargs["content_data"]["content"] = str(kwargs["content_data"].get("content", "")) + " (A0 kept)"
