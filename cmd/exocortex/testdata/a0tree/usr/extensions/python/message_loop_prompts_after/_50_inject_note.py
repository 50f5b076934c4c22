from helpers.extension import Extension
from agent import LoopData


class InjectNote(Extension):
    """Adds a note to the prompt and counts its calls in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("note_calls") or 0) + 1
        self.agent.set_data("note_calls", n)
        self.agent.context.log.log(type="info", heading="inject_note", content=f"call {n}")
        name = getattr(self.agent, "agent_name", "?")
        loop_data.extras_temporary["a0_note"] = f"A0-MARKER-alpha from {name}, call {n}, iteration {loop_data.iteration}"
