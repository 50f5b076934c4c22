from helpers.extension import Extension


class NoHook(Extension):
    """At a hook point Exocortex does not have yet."""

    async def execute(self, **kwargs):
        pass
