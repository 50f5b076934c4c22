from helpers.extension import Extension


class NoHook(Extension):
    """At a hook point that Exocortex does not have."""

    async def execute(self, **kwargs):
        pass
