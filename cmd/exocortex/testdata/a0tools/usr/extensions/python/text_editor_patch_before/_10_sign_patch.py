from helpers.extension import Extension


class SignPatch(Extension):
    """Signs every replacement the agent makes."""

    async def execute(self, data=None, **kwargs):
        if data and data.get("mode") == "replace":
            data["new_text"] = data["new_text"] + " A0-PATCHED"
