from helpers.extension import Extension
from agent import LoopData


class NoPrefix(Extension):
    async def execute(self, loop_data=LoopData(), **kwargs):
        loop_data.extras_temporary["no_prefix"] = "A0-MARKER-noprefix is not ported"
