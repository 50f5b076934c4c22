from helpers.extension import Extension


class NotePatch(Extension):
    """Remembers the last file patched."""

    async def execute(self, data=None, **kwargs):
        if data:
            self.agent.set_data("last_patch", f"{data['path']} by {data['mode']}")
