from helpers.extension import Extension
from agent import LoopData


class MessageLoopPromptsAfter(Extension):
    """Counts its calls at message_loop_prompts_after in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("message_loop_prompts_after_calls") or 0) + 1
        self.agent.set_data("message_loop_prompts_after_calls", n)
        loop_data.extras_persistent["message_loop_prompts_after"] = "A0 message_loop_prompts_after call %d" % n
