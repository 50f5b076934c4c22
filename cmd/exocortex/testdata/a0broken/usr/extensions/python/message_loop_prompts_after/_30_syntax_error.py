from helpers.extension import Extension
from agent import LoopData


class SyntaxError(Extension):
    async def execute(self, loop_data=LoopData(), **kwargs)
        loop_data.extras_temporary["broken"] = "A0-MARKER-syntax never loads"
