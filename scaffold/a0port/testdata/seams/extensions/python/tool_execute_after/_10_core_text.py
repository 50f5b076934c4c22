from helpers.extension import Extension


class C(Extension):
    async def execute(self, response=None, **kwargs):
        if "You have misformatted your message" in str(response):
            self.agent.call_utility_model(system="x", message="y")
            await self.agent.call_chat_model(messages=[])
