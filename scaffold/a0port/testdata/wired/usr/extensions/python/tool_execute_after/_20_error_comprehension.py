from helpers.extension import Extension


class ErrorComprehension(Extension):
    """Keeps a diagnosis of a failed tool call for the prompt of the next turn."""

    async def execute(self, response=None, tool_name="", **kwargs):
        message = getattr(response, "message", "") or ""
        if "error" in message.lower():
            self.agent.set_data("error_diagnosis", f"{tool_name} failed: {message[:80]}")
        else:
            self.agent.set_data("error_diagnosis", None)
