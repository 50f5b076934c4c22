from helpers.extension import Extension
from agent import LoopData


class LateInject(Extension):
    """Adds a prompt extra after the model was called: seam 7."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        loop_data.extras_temporary["too_late"] = "A0-MARKER-late"
