from helpers.extension import Extension


class Greet(Extension):
    """Base tree's greet.py: overridden by the plugin's file of the same name."""

    async def execute(self, **kwargs):
        self.agent.set_data("greeted_by", "base")
