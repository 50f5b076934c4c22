from helpers.extension import Extension
from agent import LoopData


class Second(Extension):
    """Shares its prefix with _50_inject_note.py: seam 4."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        loop_data.extras_persistent["a0_second"] = "A0-MARKER-gamma"
