from helpers.extension import Extension
from agent import LoopData


class SystemPrompt(Extension):
    """Counts its calls at system_prompt in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("system_prompt_calls") or 0) + 1
        self.agent.set_data("system_prompt_calls", n)
        kwargs["system_prompt"].append("A0 system prompt part, call %d" % n)
