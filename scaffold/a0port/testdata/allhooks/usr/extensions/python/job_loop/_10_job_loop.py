from helpers.extension import Extension


class JobLoop(Extension):
    """Counts its ticks in agent data."""

    async def execute(self, **kwargs):
        n = (self.agent.get_data("job_loop_calls") or 0) + 1
        self.agent.set_data("job_loop_calls", n)
