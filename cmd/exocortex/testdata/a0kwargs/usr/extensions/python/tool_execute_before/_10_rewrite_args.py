import asyncio

from helpers.extension import Extension
from agent import LoopData


class RewriteArgs(Extension):
    """Agent Zero passes tool_name and tool_args; changing tool_args changes the call.
    It awaits, as many Agent Zero extensions do."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        await asyncio.sleep(0)  # an extension that awaits runs on the layer's event loop
        tool_name = kwargs.get("tool_name", "")
        tool_args = kwargs.get("tool_args") or {}
        if tool_name == "response":
            tool_args["text"] = tool_args.get("text", "") + " [A0-BEFORE saw " + tool_name + "]"
