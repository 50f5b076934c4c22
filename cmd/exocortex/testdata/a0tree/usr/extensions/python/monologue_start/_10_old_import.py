from python.helpers.extension import Extension
from agent import LoopData


class OldImport(Extension):
    """Imports the pre-v1.7 module path: seam 10."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        pass
