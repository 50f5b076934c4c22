from helpers.extension import Extension
from helpers.memory import Memory


class Internal(Extension):
    async def execute(self, **kwargs):
        db = await Memory.get(self.agent)
        self.agent.set_data("memories", len(db))
