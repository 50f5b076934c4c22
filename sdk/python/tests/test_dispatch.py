"""Unit tests of Dispatch: RunBatch over one long-lived stream, as the host uses it
(send a batch, wait for its answer, send the next). sdk/batch.go's Dispatch is the
Go SDK's; the conformance suite runs both through real plugin processes. Run from
sdk/python:

    /usr/bin/python3 -B -m unittest discover -s tests
"""

import queue
import time
import unittest

import grpc

import exocortex as exo
from exocortex import testing as xt
from exocortex.v1 import hooks_pb2, plugin_pb2

from test_batch import (NOTE, OTHER, WATCHED, Ext, batch, plugin, prompt_batches, prompt_watchers, recorder, reporter,
                        value, writer, written)

_CLOSE = object()


class Stream:
    """The host's end of a Dispatch stream: send() puts a batch on the stream,
    recv() waits for the next answer, close() closes the sending side."""

    def __init__(self, client, timeout=10):
        self._q = queue.Queue()
        self.call = client.Dispatch(iter(self._q.get, _CLOSE), timeout=timeout)

    def send(self, req):
        self._q.put(req)

    def recv(self):
        return next(self.call)

    def round_trip(self, req):
        self.send(req)
        return self.recv()

    def close(self):
        self._q.put(_CLOSE)


def without_durations(resp):
    out = plugin_pb2.BatchResponse()
    out.CopyFrom(resp)
    for r in out.results:
        r.duration_us = 0
    return out


class DispatchTest(unittest.TestCase):
    def test_manifest_says_it_serves_dispatch(self):
        m = exo.new_server(plugin(Ext("a"))).manifest
        self.assertTrue(m.serves_dispatch)
        self.assertTrue(m.serves_batches)

    def test_batches_are_answered_in_order_as_run_batch_answers_them(self):
        def fail(call, req):
            if req.reply == "fail":
                raise exo.HookError("disk full")

        p = plugin(Ext("a", writer("from a"), writes=[NOTE]),
                   Ext("fragile", fail),
                   Ext("b", recorder, reads=[NOTE], writes=[OTHER]),
                   Ext("d", reporter, reads=[NOTE]))
        held = xt.state(NOTE, value("held"))
        batches = [
            batch(xt.hook_call("a"), xt.hook_call("b"), xt.hook_call("d"), iteration=1),
            batch(xt.hook_call("d", held), xt.hook_call("b"), iteration=2),  # stops after d
            batch(xt.hook_call("a"), xt.hook_call("fragile"), xt.hook_call("d"), reply="fail", iteration=3),
            batch(xt.hook_call("nobody"), xt.hook_call("d", held), iteration=4),
            plugin_pb2.BatchRequest(message_loop_start=hooks_pb2.MessageLoopStartRequest(iteration=5),
                                    calls=[xt.hook_call("a"), xt.hook_call("d")]),
            batch(iteration=6),  # no calls: no results
        ]
        with xt.served(p) as client:
            stream = Stream(client)
            for i, req in enumerate(batches):
                with self.subTest(batch=i):
                    want = client.RunBatch(req)  # a unary call while the stream is open
                    got = stream.round_trip(req)
                    self.assertEqual(without_durations(got), without_durations(want))
            stream.close()
            with self.assertRaises(StopIteration):
                stream.recv()
            self.assertEqual(stream.call.code(), grpc.StatusCode.OK)
        # What the answers say, so the comparison above compares something.
        r = [without_durations(x) for x in exo.new_server(p).Dispatch(iter(batches), None)]
        self.assertEqual([len(x.results) for x in r], [3, 1, 3, 2, 2, 0])
        self.assertEqual(r[0].results[2].message_loop_end.intervention, "saw from a at iteration 1")
        self.assertEqual(r[1].results[0].message_loop_end.intervention, "saw held at iteration 2")
        self.assertIn("disk full", r[2].results[1].error)
        self.assertEqual(r[2].results[2].message_loop_end.intervention, "saw from a at iteration 3")
        self.assertIn('no extension "nobody"', r[3].results[0].error)
        self.assertEqual(written(r[0].results[1], OTHER).value, "saw from a")

    def test_only_readers_get_the_conversation_and_the_prompt_so_far(self):
        """Over a stream too, an extension gets the history only with reads_history
        and the prompt so far only with reads_prompt, each at its hooks."""
        seen = []
        with xt.served(prompt_watchers(seen)) as client:
            calls = [xt.hook_call(n) for n in ("neither", "both", "prompt", "history", "neither")]
            stream = Stream(client)
            for req in prompt_batches(calls):
                self.assertEqual([r.error for r in stream.round_trip(req).results], [""] * 5)
            stream.close()
            self.assertEqual(list(stream.call), [])
        self.assertEqual(seen, WATCHED)

    def test_the_batch_deadline_reaches_the_extensions(self):
        seen = []

        def look(call, req):
            seen.append((call.time_remaining(), call.is_active()))

        with xt.served(plugin(Ext("look", look))) as client:
            stream = Stream(client, timeout=None)  # a stream without a deadline of its own
            stream.round_trip(plugin_pb2.BatchRequest(message_loop_end=hooks_pb2.MessageLoopEndRequest(),
                                                      calls=[xt.hook_call("look")], timeout_ms=5000))
            stream.round_trip(batch(xt.hook_call("look")))  # timeout_ms 0: none
            stream.close()
            self.assertEqual(list(stream.call), [])
        (left, active), (none, still) = seen
        self.assertTrue(0 < left <= 5, left)
        self.assertTrue(active)
        self.assertIsNone(none)
        self.assertTrue(still)

    def test_a_passed_deadline_ends_the_stream(self):
        ran = []

        def slow(call, req):
            time.sleep(0.1)
            ran.append("slow")

        def quick(call, req):
            ran.append("quick")

        with xt.served(plugin(Ext("slow", slow), Ext("quick", quick))) as client:
            stream = Stream(client)
            self.assertEqual(len(stream.round_trip(batch(xt.hook_call("quick"))).results), 1)
            stream.send(plugin_pb2.BatchRequest(message_loop_end=hooks_pb2.MessageLoopEndRequest(),
                                                calls=[xt.hook_call("slow"), xt.hook_call("quick")], timeout_ms=30))
            with self.assertRaises(grpc.RpcError) as cm:
                stream.recv()
            self.assertEqual(cm.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
            self.assertEqual(ran.count("quick"), 1)  # not again after the deadline
            # The plugin keeps serving: the host opens another stream.
            again = Stream(client)
            self.assertEqual(len(again.round_trip(batch(xt.hook_call("quick"))).results), 1)
            again.close()

    def test_a_refused_batch_ends_the_stream_with_its_refusal(self):
        with xt.served(plugin(Ext("a"))) as client:
            stream = Stream(client)
            self.assertEqual(len(stream.round_trip(batch(xt.hook_call("a"))).results), 1)
            stream.send(plugin_pb2.BatchRequest(calls=[xt.hook_call("a")]))
            with self.assertRaises(grpc.RpcError) as cm:
                stream.recv()
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("a batch without a hook request", cm.exception.details())
        # In the same process, without gRPC: the refusal is raised.
        answers = exo.new_server(plugin(Ext("a"))).Dispatch(
            iter([batch(xt.hook_call("a")), plugin_pb2.BatchRequest()]), None)
        self.assertEqual(len(next(answers).results), 1)
        with self.assertRaises(exo.Refusal) as cm:
            next(answers)
        self.assertEqual(cm.exception.code, grpc.StatusCode.INVALID_ARGUMENT)

    def test_a_dropped_stream_frees_its_worker(self):
        # One worker thread: the stream holds it while open, and the unary call
        # after it can run only once the host's cancel has freed it.
        with xt.served(plugin(Ext("a", writer("x"), writes=[NOTE]), Ext("r", reporter, reads=[NOTE])),
                       max_workers=1) as client:
            stream = Stream(client)
            self.assertEqual(len(stream.round_trip(batch(xt.hook_call("a"))).results), 1)
            stream.call.cancel()
            resp = client.RunBatch(batch(xt.hook_call("a"), xt.hook_call("r")), timeout=10)
            self.assertEqual(resp.results[1].message_loop_end.intervention, "saw x at iteration 1")


if __name__ == "__main__":
    unittest.main()
