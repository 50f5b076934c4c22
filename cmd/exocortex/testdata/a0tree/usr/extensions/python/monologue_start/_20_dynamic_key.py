from helpers.extension import Extension
from agent import LoopData


class DynamicKey(Extension):
    """Names one agent-data key at run time only, and one statically that it never
    uses in a short session: lint reports both differences."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        field = "_".join(["session", "topic"])
        self.agent.set_data(field, "notes")
        if loop_data.iteration > 99:
            self.agent.get_data("far_future")
