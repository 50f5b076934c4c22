# Fixture written for Exocortex's tests: a module of the memory plugin the
# layer has no stand-in for.
from helpers.extension import Extension
from plugins._memory.helpers.memory_quality import filter_fragments


class Quality(Extension):
    async def execute(self, system_prompt=[], loop_data=None, **kwargs):
        system_prompt.append(str(filter_fragments([])))
