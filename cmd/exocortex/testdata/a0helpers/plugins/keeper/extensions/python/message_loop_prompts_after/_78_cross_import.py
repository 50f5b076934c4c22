# Fixture written for Exocortex's tests: an import of another extension file of
# the plugin, the way the memory plugin's recall_wait imports recall_memories.
from helpers.extension import Extension
from agent import LoopData
from plugins.keeper.extensions.python.message_loop_prompts_after._71_plugin_config import MARK


class CrossImportNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        loop_data.extras_temporary["keeper_cross"] = f"{MARK} from _71_plugin_config"
