from helpers.extension import Extension


class UserMessageUi(Extension):
    """Marks the operator's message."""

    async def execute(self, data: dict = {}, **kwargs):
        data["message"] = data.get("message", "") + " (ui)"
