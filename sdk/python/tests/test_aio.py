"""One long-lived event loop per plugin process (exocortex.aio): a task an async
hook method starts in one call lives on, runs in the background and is awaited,
or polled, by a later call; a call's deadline and the host's cancellation end
the call's coroutine, not its tasks; shutdown cancels what is pending and says
so; the Agent Zero layer serves files that start a task at one hook and await
it at another on the same loop."""

import asyncio
import os
import sys
import tempfile
import textwrap
import time
import unittest

import grpc

import exocortex as exo
from exocortex import a0compat, aio
from exocortex import testing as xt
from exocortex.v1 import context_pb2, hooks_pb2, manifest_pb2

sys.path.insert(0, os.path.dirname(__file__))
from test_serve import run_script  # noqa: E402


class Recall:
    """Starts a task at monologue_start, awaits it at message_loop_prompts_after,
    the way an Agent Zero recall extension does."""

    def __init__(self):
        self.task = None
        self.loops = set()

    def spec(self):
        return exo.Spec(name="recall", injects_prompt=True)

    async def monologue_start(self, call, req):
        self.loops.add(id(asyncio.get_running_loop()))

        async def search():
            await asyncio.sleep(0.2)
            return "RECALLED"
        self.task = asyncio.create_task(search())

    async def message_loop_prompts_after(self, call, req):
        self.loops.add(id(asyncio.get_running_loop()))
        found = await self.task
        return hooks_pb2.MessageLoopPromptsAfterResponse(
            prompt_blocks=[context_pb2.PromptBlock(title="recall", content=found)])


class Poller:
    """Starts a task at monologue_start and only polls task.done() later (a sync
    method: no await)."""

    def __init__(self):
        self.task = None

    def spec(self):
        return exo.Spec(name="poller", injects_prompt=True)

    async def monologue_start(self, call, req):
        async def work():
            await asyncio.sleep(0.1)
            return "DONE-IN-BACKGROUND"
        self.task = asyncio.create_task(work())

    def message_loop_prompts_after(self, call, req):
        text = self.task.result() if self.task.done() else "still running"
        return hooks_pb2.MessageLoopPromptsAfterResponse(
            prompt_blocks=[context_pb2.PromptBlock(title="poll", content=text)])


class Slow:
    """An async hook that outlives its deadline, after starting a task that must
    survive the call's cancellation."""

    def __init__(self):
        self.child = None
        self.cancelled = False

    def spec(self):
        return exo.Spec(name="slow")

    async def message_loop_end(self, call, req):
        async def child():
            await asyncio.sleep(0.2)
            return "child finished"
        self.child = asyncio.create_task(child())
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled = True
            raise


class Deadline:
    """What a call context answers: a deadline in seconds from now, or inactive."""

    def __init__(self, seconds=None, active=True):
        self.end = time.monotonic() + seconds if seconds is not None else None
        self.active = active

    def time_remaining(self):
        return None if self.end is None else max(0.0, self.end - time.monotonic())

    def is_active(self):
        return self.active and (self.end is None or time.monotonic() < self.end)


def call_hook(service, name, req, ext, rpc=None):
    req.call.CopyFrom(xt.hook_call(ext))
    return getattr(service, "_handle")(next(h for h in exo.HOOKS if h.name == name), req, rpc)


class LongLivedLoopTest(unittest.TestCase):
    def setUp(self):
        self.service = None

    def tearDown(self):
        if self.service is not None:
            self.service.loop.close()

    def serve(self, *exts):
        self.service = exo.new_server(exo.Plugin(name="aio", extensions=list(exts)))
        return self.service

    def test_task_started_in_one_call_is_awaited_in_a_later_one(self):
        tests = [("awaited", Recall(), "RECALLED"), ("polled", Poller(), "DONE-IN-BACKGROUND")]
        for name, ext, want in tests:
            with self.subTest(name):
                s = self.serve(ext)
                call_hook(s, "monologue_start", hooks_pb2.MonologueStartRequest(), ext.spec().name)
                # The task runs between calls: by now it has finished on its own.
                time.sleep(0.4)
                resp = call_hook(s, "message_loop_prompts_after", hooks_pb2.MessageLoopPromptsAfterRequest(),
                                 ext.spec().name)
                self.assertEqual([b.content for b in resp.prompt_blocks], [want])
                s.loop.close()
                self.service = None
        self.assertEqual(len(tests[0][1].loops), 1, "the two calls ran on different event loops")

    def test_deadline_and_cancellation_end_the_call_not_its_tasks(self):
        tests = [("deadline", Deadline(0.2), grpc.StatusCode.DEADLINE_EXCEEDED),
                 ("host cancelled", Deadline(None, active=False), grpc.StatusCode.CANCELLED)]
        for name, rpc, code in tests:
            with self.subTest(name):
                ext = Slow()
                s = self.serve(ext)
                start = time.monotonic()
                with self.assertRaises(exo.Refusal) as r:
                    call_hook(s, "message_loop_end", hooks_pb2.MessageLoopEndRequest(), "slow", rpc)
                self.assertEqual(r.exception.code, code)
                self.assertIn('extension "slow" at message_loop_end', r.exception.message)
                self.assertLess(time.monotonic() - start, 5)
                fut = asyncio.run_coroutine_threadsafe(_wait(ext.child), s.loop.loop)
                self.assertEqual(fut.result(5), "child finished")
                self.assertTrue(ext.cancelled, "the call's coroutine was not cancelled")
                s.loop.close()
                self.service = None

    def test_deadlines_through_grpc(self):
        """The same through a served plugin: the client's deadline of a single
        call, and an extension's own timeout_ms in a batch."""
        from exocortex.v1 import plugin_pb2
        tests = ["call deadline", "batch timeout_ms"]
        for name in tests:
            with self.subTest(name):
                ext = Slow()
                with xt.served(exo.Plugin(name="slow", extensions=[ext])) as c:
                    start = time.monotonic()
                    if name == "call deadline":
                        with self.assertRaises(grpc.RpcError) as r:
                            c.MessageLoopEnd(hooks_pb2.MessageLoopEndRequest(call=xt.hook_call("slow")), timeout=0.3)
                        self.assertEqual(r.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
                    else:
                        hc = xt.hook_call("slow")
                        hc.timeout_ms = 300
                        resp = c.RunBatch(plugin_pb2.BatchRequest(message_loop_end=hooks_pb2.MessageLoopEndRequest(),
                                                                  calls=[hc]), timeout=20)
                        self.assertIn("DeadlineExceeded", resp.results[0].error)
                    self.assertLess(time.monotonic() - start, 10)
                    deadline = time.monotonic() + 5
                    while not ext.cancelled and time.monotonic() < deadline:
                        time.sleep(0.02)
                    self.assertTrue(ext.cancelled, "the call's coroutine still runs after its deadline")

    def test_calls_of_a_batch_run_in_order(self):
        order = []

        class Step:
            def __init__(self, name, delay):
                self.name, self.delay = name, delay

            def spec(self):
                return exo.Spec(name=self.name)

            async def message_loop_start(self, call, req):
                await asyncio.sleep(self.delay)
                order.append(self.name)

        with xt.served(exo.Plugin(name="order", extensions=[Step("a", 0.1), Step("b", 0), Step("c", 0.05)])) as c:
            from exocortex.v1 import plugin_pb2
            resp = c.RunBatch(plugin_pb2.BatchRequest(message_loop_start=hooks_pb2.MessageLoopStartRequest(),
                                                      calls=[xt.hook_call(n) for n in "abc"]))
        self.assertEqual([r.error for r in resp.results], ["", "", ""])
        self.assertEqual(order, ["a", "b", "c"])

    def test_close_all_cancels_deferred_tasks(self):
        from exocortex.a0.defer import DeferredTask

        async def index_forever():
            await asyncio.sleep(60)
        t = DeferredTask("test-deferred").start_task(index_forever)
        self.assertTrue(t.is_alive())
        names = aio.close_all()
        self.assertTrue(any("index_forever" in n for n in names), names)
        self.assertFalse(t.is_alive())

    def test_close_cancels_pending_tasks_and_names_them(self):
        loop = aio.PluginLoop("test-close")
        ended = []

        async def forever():
            try:
                await asyncio.sleep(60)
            finally:
                ended.append("unwound")

        async def start():
            asyncio.create_task(forever())  # not stored: the loop holds it
        loop.run(start(), "extension \"x\" at monologue_start")
        names = loop.close()
        self.assertEqual(len(names), 1, names)
        self.assertIn("forever", names[0])
        self.assertIn('started by extension "x" at monologue_start', names[0])
        self.assertEqual(ended, ["unwound"])
        self.assertEqual(loop.close(), [], "a second close is a no-op")


async def _wait(task):
    return await task


PLUGIN = textwrap.dedent('''
    import asyncio
    import exocortex as exo

    class Starter:
        def spec(self):
            return exo.Spec(name="starter")

        async def monologue_start(self, call, req):
            async def recall_forever():
                await asyncio.sleep(60)
            self.task = asyncio.create_task(recall_forever())

    exo.serve(exo.Plugin(name="starter", extensions=[Starter()]))
''')


class ShutdownTest(unittest.TestCase):
    def test_shutdown_cancels_pending_tasks_quietly(self):
        from google.protobuf import empty_pb2
        from exocortex.v1 import plugin_pb2_grpc
        with tempfile.TemporaryDirectory() as d:
            p = run_script(PLUGIN, env={exo.MAGIC_COOKIE_KEY: exo.MAGIC_COOKIE_VALUE, "PLUGIN_UNIX_SOCKET_DIR": d,
                                        "PLUGIN_PROTOCOL_VERSIONS": "1"})
            try:
                parts = p.stdout.readline().strip().split("|")
                channel = grpc.insecure_channel("unix:" + parts[3])
                stub = plugin_pb2_grpc.PluginStub(channel)
                stub.MonologueStart(hooks_pb2.MonologueStartRequest(call=xt.hook_call("starter")), timeout=10)
                shutdown = channel.unary_unary("/plugin.GRPCController/Shutdown",
                                               request_serializer=empty_pb2.Empty.SerializeToString,
                                               response_deserializer=empty_pb2.Empty.FromString)
                shutdown(empty_pb2.Empty(), timeout=5)
                channel.close()
                _, err = p.communicate(timeout=15)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("cancelled 1 pending task(s)", err)
        self.assertIn("recall_forever", err)
        self.assertNotIn("destroyed but it is pending", err)


TREE = {
    "monologue_start/_10_start_recall.py": '''
        import asyncio
        from helpers.extension import Extension
        from agent import LoopData


        class StartRecall(Extension):
            async def execute(self, loop_data=LoopData(), **kwargs):
                task = asyncio.create_task(self.search())
                self.agent.set_data("recall_task", task)

            async def search(self):
                await asyncio.sleep(0.05)
                # Written between calls, with no call to write it through: kept
                # in the process for the next get_data.
                self.agent.set_data("recall_note", "noted by the task")
                return "A0-RECALLED by a task started at monologue_start"
    ''',
    "message_loop_prompts_after/_50_await_recall.py": '''
        from helpers.extension import Extension
        from agent import LoopData


        class AwaitRecall(Extension):
            async def execute(self, loop_data=LoopData(), **kwargs):
                task = self.agent.get_data("recall_task")
                if task is not None:
                    loop_data.extras_temporary["recall"] = await task
    ''',
    "message_loop_prompts_after/_60_poll_recall.py": '''
        from helpers.extension import Extension
        from agent import LoopData


        class PollRecall(Extension):
            async def execute(self, loop_data=LoopData(), **kwargs):
                task = self.agent.get_data("recall_task")
                loop_data.extras_temporary["poll"] = "done" if task is not None and task.done() else "pending"
                loop_data.extras_temporary["note"] = str(self.agent.get_data("recall_note"))
    ''',
}


class AgentZeroTaskTest(unittest.TestCase):
    def test_task_in_agent_data_across_hooks(self):
        with tempfile.TemporaryDirectory() as d:
            root = os.path.join(d, "a0")
            # The shims `plugins port` writes, which the files' imports resolve to.
            shims = {"helpers/__init__.py": "", "helpers/extension.py": "from exocortex.a0compat import Extension\n",
                     "agent.py": "from exocortex.a0compat import Agent, LoopData\n"}
            for rel, code in shims.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w") as f:
                    f.write(code)
            sys.path.insert(0, d)
            self.addCleanup(sys.path.remove, d)
            for rel, code in TREE.items():
                path = os.path.join(root, "extensions", "python", rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(textwrap.dedent(code))
            p = a0compat.plugin(root, "a0-tasks")
            by = {a.name: a for a in p.extensions}
            self.assertTrue(by["poll_recall"].awaits is False, "a file that awaits nothing keeps the fast path")
            self.assertTrue(by["start_recall"].awaits, "a file using asyncio runs on the loop")
            s = exo.new_server(p)
            try:
                key = a0compat.key_name("recall_task", "a0-tasks")
                self.assertIn(key, [k for e in s.manifest.extensions for k in e.writes])
                resp = call_hook(s, "monologue_start", hooks_pb2.MonologueStartRequest(), "a0_start_recall")
                self.assertEqual(len(resp.changes.writes), 0, "the task went to typed state")
                tests = [("a0_await_recall", [("recall", "A0-RECALLED by a task started at monologue_start")]),
                         ("a0_poll_recall", [("poll", "done"), ("note", "noted by the task")])]
                for ext, want in tests:
                    resp = call_hook(s, "message_loop_prompts_after",
                                     hooks_pb2.MessageLoopPromptsAfterRequest(iteration=4), ext)
                    self.assertEqual([(b.title, b.content) for b in resp.prompt_blocks], want, ext)
            finally:
                s.loop.close()


if __name__ == "__main__":
    unittest.main()
