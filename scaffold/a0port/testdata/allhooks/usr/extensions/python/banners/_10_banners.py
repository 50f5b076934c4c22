from helpers.extension import Extension


class Banners(Extension):
    """Adds a banner naming the front end."""

    async def execute(self, banners: list = [], frontend_context: dict = {}, **kwargs):
        banners.append({"id": "allhooks", "type": "info", "priority": 1, "title": "All hooks",
                        "html": "<i>for</i> " + str(frontend_context.get("client", ""))})
