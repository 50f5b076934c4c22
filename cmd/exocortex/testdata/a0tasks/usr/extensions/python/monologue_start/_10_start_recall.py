# Fixture written for Exocortex's tests: the shape of an Agent Zero recall
# extension that starts its search as a task at one hook and leaves it in agent
# data for a later hook to await (message_loop_prompts_after/_50_await_recall.py).
import asyncio

from helpers.extension import Extension
from agent import LoopData


class StartRecall(Extension):
    async def execute(self, loop_data=LoopData(), **kwargs):
        if self.agent.get_data("recall_task") is None:
            self.agent.set_data("recall_task", asyncio.create_task(self.search()))
        if self.agent.get_data("sweep_task") is None:
            self.agent.set_data("sweep_task", asyncio.create_task(self.sweep_forever()))

    async def search(self):
        # Slower than the other task, so that the poll finds that one done. It
        # asks the utility model for its query after the hook that started it
        # has returned, as Agent Zero's memory recall does.
        await asyncio.sleep(0.3)
        query = await self.agent.call_utility_model(system="Write a search query.", message="A0-TASK-QUERY")
        return f"A0-TASK-RECALLED by the task monologue_start started, query {query}"

    async def sweep_forever(self):
        # Background work that never ends on its own: shutdown and hot reload
        # cancel it (the plugin's log says so).
        while True:
            await asyncio.sleep(0.05)
