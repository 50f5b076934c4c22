from helpers.extension import Extension
from helpers import cache


class ShowTicks(Extension):
    async def execute(self, loop_data=None, **kwargs):
        loop_data.extras_temporary["fixture_jobs"] = f"FIXTURE job ticks so far: {cache.get('fixture_jobs', 'ticks', 0)}"
