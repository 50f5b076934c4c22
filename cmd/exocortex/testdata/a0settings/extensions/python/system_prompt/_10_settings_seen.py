# Fixture written for Exocortex's tests: what helpers.settings shows a ported
# file of the session the operator started, written into the plugin's directory.
from helpers.extension import Extension
from helpers import files
from helpers.settings import get_settings


class SettingsSeen(Extension):
    async def execute(self, system_prompt: list = [], **kwargs):
        s = get_settings()
        files.write_file(
            "settings_seen.txt",
            f"chat={s['chat_model_name']} util={s['util_model_name']} ctx={s['exocortex_num_ctx']}",
        )
