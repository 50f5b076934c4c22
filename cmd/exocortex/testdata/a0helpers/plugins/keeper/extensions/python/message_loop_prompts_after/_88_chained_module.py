# Fixture written for Exocortex's tests: imports the plugin's own handler, which
# imports the plugin's client, which imports a package not installed.
from helpers.extension import Extension
from plugins.keeper.helpers.shelf_handler import handle


class Chained(Extension):
    async def execute(self, **kwargs):
        handle()
