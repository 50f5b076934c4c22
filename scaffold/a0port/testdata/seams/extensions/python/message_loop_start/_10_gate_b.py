from helpers.extension import Extension


class B(Extension):
    async def execute(self, **kwargs):
        self.agent.set_data("shared_key", 2)
        self.agent.set_data("greeted", True)
        n = self.agent.get_data("number")
