# Fixture written for Exocortex's tests: imports another file of the plugin
# (which cannot load), the way a recall-wait file does.
from helpers.extension import Extension
from plugins.recall.extensions.python.message_loop_prompts_after._50_search import DATA_NAME_TASK


class Wait(Extension):
    async def execute(self, loop_data=None, **kwargs):
        return self.agent.get_data(DATA_NAME_TASK)
