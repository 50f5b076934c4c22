from helpers.extension import Extension


class Stamp(Extension):
    """Stamps every file the agent writes; refuses to write a forbidden one."""

    async def execute(self, data=None, **kwargs):
        if data is None:
            return
        if str(data.get("path", "")).endswith("forbidden.txt"):
            raise PermissionError("A0-REFUSED: forbidden.txt is off limits")
        data["content"] = data["content"] + "\nA0-STAMPED"
