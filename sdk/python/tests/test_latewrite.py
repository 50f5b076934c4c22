"""A state change made after the hook call returned (from a task the method
left running, Agent Zero's asyncio.create_task habit) cannot travel with the
response: it is refused with LateStateWriteError naming the plugin, extension
and key, and logged with the attribute the host reads to warn the operator."""

import asyncio
import io
import json
import os
import sys
import time
import unittest

from google.protobuf import wrappers_pb2

import exocortex as exo
from exocortex.call import EVENT_ATTR, LATE_STATE_WRITE, LateStateWriteError
from exocortex.log import Logger
from exocortex.v1 import hooks_pb2

sys.path.insert(0, os.path.dirname(__file__))
from test_aio import call_hook  # noqa: E402

NOTE = exo.Key(wrappers_pb2.StringValue, name="late_note", scope=exo.SCOPE_SESSION)


class LateWriter:
    """Starts a task at monologue_start that writes its key after the call."""

    def __init__(self):
        self.task = None
        self.on_time = None

    def spec(self):
        return exo.Spec(name="late_writer", writes=[NOTE])

    async def monologue_start(self, call, req):
        NOTE.set(call, wrappers_pb2.StringValue(value="on time"))

        async def later():
            await asyncio.sleep(0.1)
            NOTE.set(call, wrappers_pb2.StringValue(value="too late"))
        self.task = asyncio.create_task(later())


class LateWriteTest(unittest.TestCase):
    def test_a_write_after_the_call_returned_is_refused_and_logged(self):
        log = io.StringIO()
        ext = LateWriter()
        s = exo.new_server(exo.Plugin(name="latewrite", extensions=[ext], logger=Logger("latewrite", stream=log)))
        try:
            resp = call_hook(s, "monologue_start", hooks_pb2.MonologueStartRequest(), "late_writer")
            self.assertEqual([w.key for w in resp.changes.writes], ["late_note"])
            deadline = time.monotonic() + 5
            while not ext.task.done() and time.monotonic() < deadline:
                time.sleep(0.02)
            self.assertTrue(ext.task.done(), "the background task did not finish")
            with self.assertRaises(LateStateWriteError) as cm:
                ext.task.result()
            for want in ('plugin "latewrite"', '"late_writer"', '"late_note"', "monologue_start", "refused"):
                self.assertIn(want, str(cm.exception))
        finally:
            s.loop.close()
        recs = [json.loads(l) for l in log.getvalue().splitlines() if l.startswith("{")]
        late = [r for r in recs if r.get(EVENT_ATTR) == LATE_STATE_WRITE]
        self.assertEqual(len(late), 1, log.getvalue())
        self.assertEqual((late[0]["@level"], late[0]["plugin"], late[0]["extension"], late[0]["hook"], late[0]["key"]),
                         ("error", "latewrite", "late_writer", "monologue_start", "late_note"))


if __name__ == "__main__":
    unittest.main()
