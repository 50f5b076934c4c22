# Fixture written for Exocortex's tests: the shape of a memory recall file, with
# a third-party import the plugin's interpreter does not have.
import not_installed_vectorlib_xyz
from helpers.extension import Extension
from helpers import plugins, errors
from plugins._memory.helpers.memory import Memory

DATA_NAME_TASK = "_search_task"


class Search(Extension):
    async def execute(self, loop_data=None, **kwargs):
        cfg = plugins.get_plugin_config("recall", self.agent)
        db = await Memory.get(self.agent)
        loop_data.extras_temporary["found"] = str(await db.search_similarity_threshold("q", cfg["recall_limit"], 0.7))
