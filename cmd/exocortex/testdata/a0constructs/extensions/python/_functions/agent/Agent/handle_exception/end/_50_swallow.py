from helpers.extension import Extension


class Swallow(Extension):
    """Clears the exception, so the monologue goes on (Agent Zero's retry files do)."""

    async def execute(self, data: dict = {}, **kwargs):
        if data.get("exception"):
            self.agent.set_data("swallowed", str(data["exception"]))
            data["exception"] = None
