# Fixture written for Exocortex's tests: the tool prompts of the plugin's
# prompt directories (helpers.subagents), filtered by the tools the host gives
# the model (helpers.tool_policy), and the session's models
# (plugins._model_config).
import os

from helpers.extension import Extension
from helpers import files, subagents, tool_policy
from agent import LoopData


class KeeperToolsPrompt(Extension):
    async def execute(self, system_prompt: list = [], loop_data: LoopData = LoopData(), **kwargs):
        dirs = subagents.get_paths(self.agent, "prompts")
        found = files.get_unique_filenames_in_dirs(dirs, "agent.system.tool.*.md")
        prompts = [(f, self.agent.read_prompt(os.path.basename(f))) for f in found]
        kept = [p.strip() for p in tool_policy.filter_tool_prompts(self.agent, prompts) if p]
        from plugins._model_config.helpers.model_config import (
            get_chat_model_config,
            get_utility_model_config,
            get_vision_model_config,
        )

        chat = get_chat_model_config(self.agent)
        system_prompt.append(
            f"A0-MARKER-tools found={len(found)} kept={kept} "
            f"response_allowed={tool_policy.resolve_tool(self.agent, 'response').allowed}\n"
            f"A0-MARKER-models chat={chat['name']} vision={get_vision_model_config(self.agent)} "
            f"utility={get_utility_model_config(self.agent).get('name')} "
            f"profile={subagents.get_current_profile(self.agent)}"
        )
