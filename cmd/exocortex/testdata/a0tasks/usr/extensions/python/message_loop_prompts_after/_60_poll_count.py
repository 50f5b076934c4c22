# Fixture written for Exocortex's tests: polls the task monologue_start's
# _20_start_count.py left in agent data, without awaiting anything.
from helpers.extension import Extension
from agent import LoopData


class PollCount(Extension):
    async def execute(self, loop_data=LoopData(), **kwargs):
        task = self.agent.get_data("count_task")
        sweep = self.agent.get_data("sweep_task")
        if task is not None and task.done():
            state = f"done, counted {task.result()}"
        else:
            state = "pending"
        running = sweep is not None and not sweep.done()
        loop_data.extras_temporary["poll"] = f"A0-POLL {state}; sweep running={running}"
