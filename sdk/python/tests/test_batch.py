"""Unit tests of RunBatch: consecutive extensions at one hook in one round trip, each
run exactly as its own call would run it (sdk/batch.go is the Go SDK's). Run from
sdk/python:

    /usr/bin/python3 -B -m unittest discover -s tests
"""

import io
import time
import unittest

import grpc
from google.protobuf import wrappers_pb2

import exocortex as exo
from exocortex import testing as xt
from exocortex.v1 import context_pb2, hooks_pb2, manifest_pb2, plugin_pb2

NOTE = exo.Key(wrappers_pb2.StringValue, name="note", scope=exo.SCOPE_ITERATION, doc="Passed along a batch.")
OTHER = exo.Key(wrappers_pb2.StringValue, name="other", scope=exo.SCOPE_ITERATION, doc="Read by nobody.")


class Ext:
    """An extension at message_loop_end (and message_loop_start) whose behaviour
    each test supplies: run(call, req) -> response or None."""

    def __init__(self, name, run=None, **spec):
        self._spec = exo.Spec(name=name, **spec)
        self._run = run

    def spec(self):
        return self._spec

    def message_loop_end(self, call, req):
        return self._run(call, req) if self._run else None

    def message_loop_start(self, call, req):
        return self._run(call, req) if self._run else None


def note_of(call):
    v = NOTE.get(call)
    return v.value if v is not None else "nothing"


def writer(text):
    def run(call, req):
        NOTE.set(call, wrappers_pb2.StringValue(value=text))
    return run


def resetter(call, req):
    NOTE.reset(call)


def reporter(call, req):
    """Tells what it saw, in a field besides state: the batch stops after it."""
    return hooks_pb2.MessageLoopEndResponse(intervention=f"saw {note_of(call)} at iteration {req.iteration}")


def recorder(call, req):
    """Writes what it saw, in state only: the batch goes on."""
    OTHER.set(call, wrappers_pb2.StringValue(value=f"saw {note_of(call)}"))


def keys_sent(call, req):
    """Writes the keys its HookCall holds (it reads none)."""
    OTHER.set(call, wrappers_pb2.StringValue(value="sent: " + ",".join(s.key for s in req.call.state)))


class PromptWatch:
    """An extension at system_prompt, message_loop_prompts_after and
    before_main_llm_call that records which of the request's fields it was given;
    it answers with nothing, so a batch goes on past it."""

    def __init__(self, name, seen, reads_history=False, reads_prompt=False):
        self._spec = exo.Spec(name=name, reads_history=reads_history, reads_prompt=reads_prompt)
        self.seen = seen

    def spec(self):
        return self._spec

    def system_prompt(self, call, req):
        self.seen.append(f"{call.extension} system_prompt: {req.system_prompt!r} tools={len(req.tools)}")

    def message_loop_prompts_after(self, call, req):
        self.seen.append(f"{call.extension} message_loop_prompts_after: iteration={req.iteration} "
                         f"history={len(req.history)} extras={len(req.extras)} "
                         f"prompt_tokens={req.prompt_tokens} num_ctx={req.num_ctx}")

    def before_main_llm_call(self, call, req):
        self.seen.append(f"{call.extension} before_main_llm_call: prompt={len(req.prompt)} "
                         f"prompt_tokens={req.prompt_tokens} num_ctx={req.num_ctx}")


def prompt_watchers(seen):
    """A plugin of PromptWatch extensions, one of each kind, recording into seen."""
    return plugin(PromptWatch("both", seen, reads_history=True, reads_prompt=True),
                  PromptWatch("prompt", seen, reads_prompt=True),
                  PromptWatch("history", seen, reads_history=True),
                  PromptWatch("neither", seen))


def prompt_batches(calls):
    """A batch of calls at each of PromptWatch's hooks, every field filled."""
    history = [context_pb2.Message(role="user", content="hi"), context_pb2.Message(role="assistant", content="yo")]
    extras = [context_pb2.PromptBlock(title="EXTRA", content="x")]
    return [
        plugin_pb2.BatchRequest(system_prompt=hooks_pb2.SystemPromptRequest(
            system_prompt="You help.", tools=[manifest_pb2.ToolSpec(name="shell")]), calls=calls),
        plugin_pb2.BatchRequest(message_loop_prompts_after=hooks_pb2.MessageLoopPromptsAfterRequest(
            iteration=2, history=history, extras=extras, num_ctx=8192, prompt_tokens=1000), calls=calls),
        plugin_pb2.BatchRequest(before_main_llm_call=hooks_pb2.BeforeMainLLMCallRequest(
            iteration=2, prompt=history, num_ctx=8192, prompt_tokens=1200), calls=calls),
    ]


# What PromptWatch("neither"), ("both"), ("prompt"), ("history"), ("neither") see
# of prompt_batches.
WATCHED = [
    "neither system_prompt: '' tools=1",
    "both system_prompt: 'You help.' tools=1",
    "prompt system_prompt: 'You help.' tools=1",
    "history system_prompt: '' tools=1",
    "neither system_prompt: '' tools=1",
    "neither message_loop_prompts_after: iteration=2 history=0 extras=0 prompt_tokens=0 num_ctx=8192",
    "both message_loop_prompts_after: iteration=2 history=2 extras=1 prompt_tokens=1000 num_ctx=8192",
    "prompt message_loop_prompts_after: iteration=2 history=0 extras=1 prompt_tokens=1000 num_ctx=8192",
    "history message_loop_prompts_after: iteration=2 history=2 extras=0 prompt_tokens=0 num_ctx=8192",
    "neither message_loop_prompts_after: iteration=2 history=0 extras=0 prompt_tokens=0 num_ctx=8192",
    "neither before_main_llm_call: prompt=0 prompt_tokens=1200 num_ctx=8192",
    "both before_main_llm_call: prompt=2 prompt_tokens=1200 num_ctx=8192",
    "prompt before_main_llm_call: prompt=0 prompt_tokens=1200 num_ctx=8192",
    "history before_main_llm_call: prompt=2 prompt_tokens=1200 num_ctx=8192",
    "neither before_main_llm_call: prompt=0 prompt_tokens=1200 num_ctx=8192",
]


def value(v):
    return wrappers_pb2.StringValue(value=v)


def batch(*calls, reply="", iteration=1):
    return plugin_pb2.BatchRequest(
        message_loop_end=hooks_pb2.MessageLoopEndRequest(iteration=iteration, reply=reply), calls=list(calls))


def plugin(*exts):
    return exo.Plugin(name="batcher", extensions=list(exts), logger=exo.Logger("batcher", io.StringIO()))


def written(res, key):
    return xt.written(res.message_loop_end.changes, key)


class BatchTest(unittest.TestCase):
    def test_manifest_says_it_serves_batches(self):
        self.assertTrue(exo.new_server(plugin(Ext("a"))).manifest.serves_batches)

    def test_state_threads_through_the_batch(self):
        p = plugin(Ext("a", writer("from a"), writes=[NOTE]),
                   Ext("b", recorder, reads=[NOTE], writes=[OTHER]),
                   Ext("blind", keys_sent, writes=[OTHER]),
                   Ext("eraser", resetter, writes=[NOTE], resets=[NOTE]),
                   Ext("c", recorder, reads=[NOTE], writes=[OTHER]),
                   Ext("d", reporter, reads=[NOTE]))
        with xt.served(p) as client:
            # b was sent no note: it sees a's, which the batch adds to its state;
            # blind does not read the key and is not given it; c was sent the
            # note the host had, which the eraser's reset takes away.
            held = xt.state(NOTE, value("from the host"))
            resp = client.RunBatch(batch(xt.hook_call("a"), xt.hook_call("b"), xt.hook_call("blind"),
                                         xt.hook_call("eraser", held), xt.hook_call("c", held),
                                         xt.hook_call("d", held)))
        self.assertEqual(len(resp.results), 6)
        for r in resp.results:
            self.assertEqual(r.error, "")
            self.assertEqual(r.WhichOneof("response"), "message_loop_end")
        self.assertEqual(written(resp.results[0], NOTE).value, "from a")
        self.assertEqual(written(resp.results[1], OTHER).value, "saw from a")
        self.assertEqual(written(resp.results[2], OTHER).value, "sent: ")
        self.assertEqual(list(resp.results[3].message_loop_end.changes.resets), ["note"])
        self.assertEqual(written(resp.results[4], OTHER).value, "saw nothing")
        self.assertEqual(resp.results[5].message_loop_end.intervention, "saw nothing at iteration 1")

    def test_a_later_write_replaces_what_the_host_sent(self):
        p = plugin(Ext("a", writer("first"), writes=[NOTE]), Ext("b", writer("second"), writes=[NOTE]),
                   Ext("c", reporter, reads=[NOTE]))
        held = xt.state(NOTE, value("from the host"))
        with xt.served(p) as client:
            resp = client.RunBatch(batch(xt.hook_call("a"), xt.hook_call("b"), xt.hook_call("c", held)))
        self.assertEqual(resp.results[2].message_loop_end.intervention, "saw second at iteration 1")
        # The value the host sent is replaced, not left beside the new one.
        second = resp.results[1].message_loop_end.changes.writes[0].value
        hc = exo.new_server(p)._overlay(xt.hook_call("c", held), {"note": second})
        self.assertEqual([(s.key, s.value) for s in hc.state], [("note", second)])

    def test_each_extension_gets_its_own_request(self):
        def mutate(call, req):
            req.iteration += 100
            req.reply = "changed"
            req.call.extension = "someone else"
            req.call.context.message_id = "changed"

        def report(call, req):
            return hooks_pb2.MessageLoopEndResponse(
                intervention=f"{req.iteration} {req.reply} {req.call.extension} {call.context.message_id}")

        with xt.served(plugin(Ext("mutator", mutate), Ext("mutator2", mutate), Ext("observer", report))) as client:
            hc = xt.hook_call("observer")
            hc.context.message_id = "m1"
            resp = client.RunBatch(batch(xt.hook_call("mutator"), xt.hook_call("mutator2"), hc, reply="hi"))
        self.assertEqual(resp.results[2].message_loop_end.intervention, "1 hi observer m1")

    def test_stops_after_a_result_with_more_than_state(self):
        def blocks(call, req):
            NOTE.set(call, value("with blocks"))
            return hooks_pb2.MessageLoopPromptsAfterResponse(prompt_blocks=[context_pb2.PromptBlock(content="x")])

        class Prompter:
            def spec(self):
                return exo.Spec(name="prompter", writes=[NOTE], injects_prompt=True)

            def message_loop_prompts_after(self, call, req):
                return blocks(call, req)

        class Quiet(Prompter):
            def spec(self):
                return exo.Spec(name="quiet", reads=[NOTE])

            def message_loop_prompts_after(self, call, req):
                return None

        with xt.served(plugin(Prompter(), Quiet())) as client:
            resp = client.RunBatch(plugin_pb2.BatchRequest(
                message_loop_prompts_after=hooks_pb2.MessageLoopPromptsAfterRequest(iteration=2),
                calls=[xt.hook_call("quiet"), xt.hook_call("prompter"), xt.hook_call("quiet")]))
        self.assertEqual(len(resp.results), 2)
        self.assertEqual(resp.results[0].WhichOneof("response"), "message_loop_prompts_after")
        r = resp.results[1].message_loop_prompts_after
        self.assertEqual([b.content for b in r.prompt_blocks], ["x"])
        self.assertEqual(xt.written(r.changes, NOTE).value, "with blocks")

        # Any field besides changes stops it, an empty optional one too.
        def empty_intervention(call, req):
            return hooks_pb2.MessageLoopEndResponse(intervention="")
        with xt.served(plugin(Ext("a", empty_intervention), Ext("b"))) as client:
            self.assertEqual(len(client.RunBatch(batch(xt.hook_call("a"), xt.hook_call("b"))).results), 1)

    def test_unknown_fields_stop_it(self):
        def unknown(call, req):  # field 18 is not in MessageLoopStartResponse
            return hooks_pb2.MessageLoopStartResponse.FromString(b"\x92\x01\x01a")
        with xt.served(plugin(Ext("a", unknown), Ext("b"))) as client:
            resp = client.RunBatch(plugin_pb2.BatchRequest(
                message_loop_start=hooks_pb2.MessageLoopStartRequest(), calls=[xt.hook_call("a"), xt.hook_call("b")]))
        self.assertEqual(len(resp.results), 1)

    def test_an_error_is_its_result_and_the_batch_goes_on(self):
        def fail(call, req):
            if req.reply == "fail":
                raise exo.HookError("disk full")
            if req.reply == "status":
                raise exo.StatusError(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down")
            if req.reply == "boom":
                raise KeyError("x")
            NOTE.set(call, value("from fragile"))  # undeclared: refused
        p = plugin(Ext("a", writer("from a"), writes=[NOTE]), Ext("fragile", fail, reads=[NOTE]),
                   Ext("c", recorder, reads=[NOTE], writes=[OTHER]))
        cases = {
            "fail": 'rpc error: code = Unknown desc = extension "fragile" at message_loop_end: disk full',
            "status": "rpc error: code = ResourceExhausted desc = slow down",
            "boom": 'rpc error: code = Internal desc = extension "fragile" raised at message_loop_end: KeyError',
            "write": ('rpc error: code = FailedPrecondition desc = extension "fragile": write of state key "note", '
                      "which its Spec does not list in writes"),
        }
        with xt.served(p) as client:
            for reply, want in cases.items():
                with self.subTest(reply):
                    resp = client.RunBatch(batch(xt.hook_call("a"), xt.hook_call("fragile"), xt.hook_call("c"),
                                                 reply=reply))
                    self.assertEqual(len(resp.results), 3)
                    self.assertTrue(resp.results[1].error.startswith(want), resp.results[1].error)
                    self.assertIsNone(resp.results[1].WhichOneof("response"))
                    # c still ran, and saw a's write, not the refused one.
                    self.assertEqual(written(resp.results[2], OTHER).value, "saw from a")
            resp = client.RunBatch(batch(xt.hook_call("nobody"), xt.hook_call("c")))
            self.assertIn('rpc error: code = NotFound desc = plugin "batcher" has no extension "nobody"',
                          resp.results[0].error)
            self.assertEqual(written(resp.results[1], OTHER).value, "saw nothing")

    def test_each_extension_has_its_own_deadline(self):
        def slow(call, req):
            while call.is_active():  # a well-behaved extension: it stops when told
                time.sleep(0.005)
        p = plugin(Ext("slow", slow), Ext("c", recorder, reads=[NOTE], writes=[OTHER]))
        slow_call = xt.hook_call("slow")
        slow_call.timeout_ms = 100
        with xt.served(p) as client:
            resp = client.RunBatch(batch(slow_call, xt.hook_call("c")))
        self.assertEqual(len(resp.results), 2)
        self.assertEqual(resp.results[0].error, 'rpc error: code = DeadlineExceeded desc = extension "slow" '
                                                 "did not finish within its deadline of 100ms")
        self.assertLess(resp.results[0].duration_us, 5_000_000)
        self.assertEqual(written(resp.results[1], OTHER).value, "saw nothing")

    def test_a_result_is_what_its_own_call_answers(self):
        def report(call, req):
            return hooks_pb2.MessageLoopEndResponse(intervention=f"{note_of(call)} {req.reply} {call.context.message_id}")
        p = plugin(Ext("r", report, reads=[NOTE]))
        hc = xt.hook_call("r", xt.state(NOTE, value("held")))
        with xt.served(p) as client:
            own = client.MessageLoopEnd(hooks_pb2.MessageLoopEndRequest(call=hc, reply="hi", iteration=1))
            resp = client.RunBatch(batch(hc, reply="hi"))
        self.assertEqual(resp.results[0].message_loop_end, own)

    def test_only_history_readers_get_the_history(self):
        class Counter:
            def __init__(self, name, reads_history):
                self._spec = exo.Spec(name=name, reads_history=reads_history)

            def spec(self):
                return self._spec

            def monologue_end(self, call, req):
                seen.append((call.extension, len(req.history)))

            def before_main_llm_call(self, call, req):
                seen.append((call.extension, len(req.prompt)))

        history = [context_pb2.Message(role="user", content="hi"), context_pb2.Message(role="assistant", content="yo")]
        seen = []
        with xt.served(plugin(Counter("reader", True), Counter("skimmer", False))) as client:
            calls = [xt.hook_call("skimmer"), xt.hook_call("reader"), xt.hook_call("skimmer")]
            client.RunBatch(plugin_pb2.BatchRequest(monologue_end=hooks_pb2.MonologueEndRequest(history=history),
                                                    calls=calls))
            client.RunBatch(plugin_pb2.BatchRequest(
                before_main_llm_call=hooks_pb2.BeforeMainLLMCallRequest(prompt=history), calls=calls))
        self.assertEqual(seen, [("skimmer", 0), ("reader", 2), ("skimmer", 0)] * 2)

    def test_only_prompt_readers_get_the_prompt_so_far(self):
        """reads_prompt governs system_prompt's system_prompt and
        message_loop_prompts_after's extras and prompt_tokens, and nothing else:
        before_main_llm_call's prompt_tokens is everyone's. reads_history and
        reads_prompt are independent."""
        seen = []
        with xt.served(prompt_watchers(seen)) as client:
            calls = [xt.hook_call(n) for n in ("neither", "both", "prompt", "history", "neither")]
            for req in prompt_batches(calls):
                client.RunBatch(req)
        self.assertEqual(seen, WATCHED)

    def test_duration(self):
        def slow(call, req):
            time.sleep(0.02)
        with xt.served(plugin(Ext("slow", slow), Ext("quick"))) as client:
            start = time.monotonic()
            resp = client.RunBatch(batch(xt.hook_call("slow"), xt.hook_call("quick")))
            elapsed_us = (time.monotonic() - start) * 1e6
        self.assertGreaterEqual(resp.results[0].duration_us, 20000)
        self.assertLessEqual(resp.results[0].duration_us + resp.results[1].duration_us, elapsed_us)

    def test_malformed_batches(self):
        with xt.served(plugin(Ext("a"))) as client:
            with self.assertRaises(grpc.RpcError) as cm:
                client.RunBatch(plugin_pb2.BatchRequest(calls=[xt.hook_call("a")]))
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("a batch without a hook request", cm.exception.details())
            self.assertEqual(len(client.RunBatch(batch()).results), 0)
            # An extension at another hook than the batch's.
            resp = client.RunBatch(plugin_pb2.BatchRequest(
                system_prompt=hooks_pb2.SystemPromptRequest(), calls=[xt.hook_call("a")]))
            self.assertIn('no extension "a" at system_prompt', resp.results[0].error)
        with self.assertRaises(exo.Refusal) as cm:
            exo.new_server(plugin(Ext("a"))).RunBatch(plugin_pb2.BatchRequest(), None)
        self.assertEqual(cm.exception.code, grpc.StatusCode.INVALID_ARGUMENT)

    def test_every_hook(self):
        """A batch at each hook reaches that hook's method and answers in the
        result's field of the same number."""
        class All:
            def spec(self):
                return exo.Spec(name="all", writes=[NOTE])

        def method(name):
            def run(self, call, req):
                NOTE.set(call, value(name))
            return run
        for info in exo.HOOKS:
            setattr(All, info.name, method(info.name))
        with xt.served(plugin(All())) as client:
            for info in exo.HOOKS:
                with self.subTest(info.name):
                    req = plugin_pb2.BatchRequest(calls=[xt.hook_call("all")])
                    getattr(req, info.name).CopyFrom(info.request())
                    res = client.RunBatch(req).results[0]
                    self.assertEqual(res.error, "")
                    # The result's field is named for the hook (numbered 100 + the
                    # hook after 15).
                    self.assertEqual(res.WhichOneof("response"), info.name)
                    self.assertEqual(xt.written(getattr(res, info.name).changes, NOTE).value, info.name)
        self.assertEqual(len(exo.HOOKS), len(manifest_pb2.Hook.DESCRIPTOR.values) - 1)


if __name__ == "__main__":
    unittest.main()
