# Fixture written for Exocortex's tests (not Agent Zero's code), in the shape
# of a real v1.7 system_prompt file: the @extensible helper from
# helpers.extension, a prompt file read with read_prompt and kwargs, the loop
# data's responses_prompt_replacements, and a log item updated with kvps.
from typing import Any

from helpers.extension import Extension, extensible
from agent import Agent, LoopData


class PromptFile(Extension):
    async def execute(self, system_prompt: list[str] = [], loop_data: LoopData = LoopData(), **kwargs: Any):
        if not self.agent:
            return
        item = self.agent.context.log.log(type="util", heading="building the role")
        text = await role_text(self.agent)
        loop_data.responses_prompt_replacements["x"] = "y"
        item.update(kvps={"chars": len(text)})
        if item.kvps.get("chars") == len(text):
            system_prompt.append(text)


@extensible
async def role_text(agent: Agent) -> str:
    return agent.read_prompt("fixture.role.md", who="the porter")
