from helpers.extension import Extension
from agent import LoopData


class Mask(Extension):
    """Agent Zero passes stream_data {"chunk", "full"}; a masked chunk is what is shown."""

    async def execute(self, loop_data=LoopData(), stream_data=None, **kwargs):
        if stream_data and "SECRET" in stream_data.get("full", ""):
            stream_data["chunk"] = "A0-MASKED"
