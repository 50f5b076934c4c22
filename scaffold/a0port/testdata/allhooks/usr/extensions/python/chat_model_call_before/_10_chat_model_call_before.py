from helpers.extension import Extension
from agent import LoopData


class ChatModelCallBefore(Extension):
    """Counts its calls at chat_model_call_before in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("chat_model_call_before_calls") or 0) + 1
        self.agent.set_data("chat_model_call_before_calls", n)
        self.agent.set_data("chat_model_call_before_messages", len(kwargs["call_data"].get("messages", [])))
