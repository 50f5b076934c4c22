from helpers.extension import Extension
from agent import LoopData


class Role(Extension):
    """Appends a line to the system prompt."""

    async def execute(self, system_prompt: list = [], loop_data=LoopData(), **kwargs):
        system_prompt.append("A0-MARKER-beta: you are a careful researcher.")
