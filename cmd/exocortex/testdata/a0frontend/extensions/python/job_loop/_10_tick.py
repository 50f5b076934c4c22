from helpers.extension import Extension
from helpers import cache


class Tick(Extension):
    async def execute(self, **kwargs):
        cache.add("fixture_jobs", "ticks", cache.get("fixture_jobs", "ticks", 0) + 1)
        cache.trim_cache("*", seconds=300)
