from helpers.extension import Extension


class TagTerminal(Extension):
    async def execute(self, data: dict = {}, **kwargs):
        data["message"] = data.get("message", "") + " [typed in the UI]"
