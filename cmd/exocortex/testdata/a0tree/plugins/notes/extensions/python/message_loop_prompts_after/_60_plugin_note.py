from helpers.extension import Extension
from agent import LoopData


class PluginNote(Extension):
    """A v1.7 plugin's extension."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        if loop_data.user_message:
            loop_data.extras_temporary["plugin_note"] = "A0-MARKER-delta saw: " + str(loop_data.user_message)
