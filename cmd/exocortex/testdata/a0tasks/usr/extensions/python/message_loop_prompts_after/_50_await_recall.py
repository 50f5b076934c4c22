# Fixture written for Exocortex's tests: awaits the task monologue_start's
# _10_start_recall.py left in agent data.
from helpers.extension import Extension
from agent import LoopData


class AwaitRecall(Extension):
    async def execute(self, loop_data=LoopData(), **kwargs):
        task = self.agent.get_data("recall_task")
        if task is None:
            loop_data.extras_temporary["recall"] = "A0-TASK-MISSING"
            return
        loop_data.extras_temporary["recall"] = await task
