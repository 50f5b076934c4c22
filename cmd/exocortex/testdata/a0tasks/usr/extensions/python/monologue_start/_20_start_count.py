# Fixture written for Exocortex's tests: a task started at one hook whose result a
# later hook only polls (task.done()), never awaits.
import asyncio

from helpers.extension import Extension
from agent import LoopData


class StartCount(Extension):
    async def execute(self, loop_data=LoopData(), **kwargs):
        if self.agent.get_data("count_task") is None:
            self.agent.set_data("count_task", asyncio.create_task(self.count()))

    async def count(self):
        await asyncio.sleep(0.05)
        return 42
