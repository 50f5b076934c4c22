from helpers.extension import Extension


class HouseRules(Extension):
    async def execute(self, system_prompt: list = [], **kwargs):
        system_prompt.append(self.agent.read_prompt("house.rules.md", owner="the operator"))
