from helpers.extension import Extension


class A(Extension):
    async def execute(self, **kwargs):
        self.agent.set_data("shared_key", 1)
        if self.agent.get_data("greeted"):
            return
        self.agent.set_data("greeted", True)
