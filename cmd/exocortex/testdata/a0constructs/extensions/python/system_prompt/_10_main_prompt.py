from helpers.extension import Extension


class MainPrompt(Extension):
    async def execute(self, system_prompt: list = [], **kwargs):
        system_prompt.append(self.agent.read_prompt("agent.system.main.md"))
