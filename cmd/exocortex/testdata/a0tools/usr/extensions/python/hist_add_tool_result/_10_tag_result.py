from helpers.extension import Extension


class TagResult(Extension):
    """Tags each tool result before it is stored in the history."""

    async def execute(self, data=None, **kwargs):
        if data and data.get("tool_name") == "stream":
            data["tool_result"] = str(data["tool_result"]) + " [A0-STORED]"
