from helpers.extension import Extension
from agent import LoopData


class ProcessChainEnd(Extension):
    """Counts its calls at process_chain_end in agent data, and uses what Agent Zero hands the hook."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("process_chain_end_calls") or 0) + 1
        self.agent.set_data("process_chain_end_calls", n)
        self.agent.set_data("process_chain_end_final", kwargs["data"].get("final_response", ""))
