from helpers.extension import Extension
from agent import LoopData


class NoteResponse(Extension):
    """Agent Zero passes the tool's Response; its message is what the agent keeps."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        response = kwargs.get("response")
        if response is not None and kwargs.get("tool_name") == "response":
            self.agent.set_data("last_tool", kwargs["tool_name"])
            response.message = response.message + " [A0-AFTER]"
