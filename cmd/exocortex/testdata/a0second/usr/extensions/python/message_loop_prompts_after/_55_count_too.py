from helpers.extension import Extension
from agent import LoopData


class CountToo(Extension):
    """Counts its calls under the same agent-data name as the fixture tree's note."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("note_calls") or 0) + 1
        self.agent.set_data("note_calls", n)
        loop_data.extras_temporary["second_note"] = f"A0-MARKER-second call {n}"
