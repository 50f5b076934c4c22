from helpers.extension import Extension


class NoPython(Extension):
    """At extensions/<hook>/ without python/: seam 8."""

    async def execute(self, **kwargs):
        pass
