# Fixture written for Exocortex's tests (not Agent Zero's code): helpers.plugins,
# the plugin's own configuration (default_config.yaml with config.json over it).
from helpers.extension import Extension
from agent import LoopData
from helpers import plugins

MARK = "A0-MARKER-cross-import"


class PluginConfigNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        cfg = plugins.get_plugin_config("keeper", self.agent)
        if not cfg or not cfg["keeper_enabled"]:
            return
        missing = plugins.get_plugin_config("not_installed", self.agent)
        loop_data.extras_temporary["keeper_config"] = (
            f"A0-MARKER-config mode={cfg['keeper_mode']} limit={cfg['keeper_limit']} other={missing}"
        )
