from helpers.extension import Extension
from agent import LoopData


class CountMessages(Extension):
    """Agent Zero hands call_data with the messages about to be sent."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        call_data = kwargs.get("call_data") or {}
        self.agent.set_data("sent_messages", len(call_data.get("messages", [])))
