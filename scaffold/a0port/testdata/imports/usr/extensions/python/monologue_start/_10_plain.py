import asyncio
from helpers.extension import Extension


class Plain(Extension):
    async def execute(self, **kwargs):
        await asyncio.sleep(0)
