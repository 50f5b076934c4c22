# Fixture written for Exocortex's tests: helpers.defer runs a coroutine on the
# background event loop thread; the next iteration reads its result.
import asyncio
import threading

from helpers.extension import Extension
from helpers.defer import DeferredTask, THREAD_BACKGROUND
from agent import LoopData

TASK = "_keeper_" + "task"  # a name made at run time: kept in the plugin process


async def background_work(n):
    await asyncio.sleep(0.05)
    return f"{n * 7} on {threading.current_thread().name}"


class DeferNote(Extension):
    def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        task = self.agent.get_data(TASK)
        if task is None:
            task = DeferredTask(thread_name=THREAD_BACKGROUND)
            task.start_task(background_work, 6)
            self.agent.set_data(TASK, task)
            return
        loop_data.extras_temporary["keeper_defer"] = (
            f"A0-MARKER-defer result={task.result_sync(10)} ready={task.is_ready()}"
        )
