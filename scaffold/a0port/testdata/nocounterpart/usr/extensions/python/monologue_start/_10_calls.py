# Fixture written for Exocortex's tests: calls of Agent Zero helpers that have
# no counterpart in Exocortex, in each import shape, beside ones that have.
from helpers.extension import Extension
import helpers.persist_chat
from helpers import subagents
from helpers.settings import get_settings, set_settings_delta
from plugins._model_config.helpers.model_config import get_chat_model_config, build_utility_model
from plugins._model_config.helpers import model_config


class Calls(Extension):
    async def execute(self, **kwargs):
        helpers.persist_chat.export_json_chat(self.agent.context)
        subagents.load_agent_data("keeper")
        set_settings_delta({"x": 1})
        build_utility_model(self.agent)
        model_config.get_presets()
        subagents.get_paths(self.agent, "prompts")
        get_settings().get("chat_model_name")
        get_chat_model_config(self.agent)
        self.agent.build_utility_model_like = None
        helpers.persist_chat.save_tmp_chat(self.agent.context)
