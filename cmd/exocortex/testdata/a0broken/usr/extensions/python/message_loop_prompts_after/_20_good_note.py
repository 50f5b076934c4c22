from helpers.extension import Extension
from agent import LoopData


class GoodNote(Extension):
    """The one sound file of the tree: its note reaches the model."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        loop_data.extras_temporary["good"] = "A0-MARKER-good survives its broken neighbours"
