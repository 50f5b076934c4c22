from helpers.extension import Extension


class Greet(Extension):
    """The plugin's greet.py, with no numeric prefix: it overrides the base
    tree's and runs after _10_count.py, in name order."""

    async def execute(self, **kwargs):
        self.agent.set_data("greeted_by", "plugin")
