from helpers.extension import Extension


class NoHook(Extension):
    """At a hook point of Agent Zero's web UI, which Exocortex does not have."""

    async def execute(self, **kwargs):
        pass
