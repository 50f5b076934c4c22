# Fixture written for Exocortex's tests: helpers.settings, a read-only view of
# the session's settings.
from helpers.extension import Extension
from helpers.settings import get_settings
from agent import LoopData


class SettingsNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        settings = get_settings()
        try:
            settings["chat_model_name"] = "another-model"
            write = "written"
        except Exception as e:
            write = f"refused ({type(e).__name__})"
        loop_data.extras_temporary["keeper_settings"] = (
            f"A0-MARKER-settings chat={settings['chat_model_name']} util={settings.get('util_model_name')} "
            f"telemetry={settings.get('telemetry_enabled', 'unset')} write={write}"
        )
