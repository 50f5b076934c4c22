from helpers.extension import Extension
from agent import LoopData


class AgentInit(Extension):
    """Counts its calls at agent_init in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("agent_init_calls") or 0) + 1
        self.agent.set_data("agent_init_calls", n)
