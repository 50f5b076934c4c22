"""Unit tests of the Python SDK, through a real gRPC connection (exocortex.testing).
They mirror the Go SDK's tests (sdk/sdk_test.go): the same manifest, refusals and
status codes. Run from sdk/python:

    /usr/bin/python3 -B -m unittest discover -s tests

(go test ./sdk/conformance runs them too.) The process-level behaviour (handshake,
health, shutdown, orphan exit, timeouts) is checked by the conformance suite.
"""

import datetime
import io
import json
import threading
import unittest

import grpc
from google.protobuf import wrappers_pb2

import exocortex as exo
from exocortex import testing as xt
from exocortex.v1 import context_pb2, hooks_pb2, manifest_pb2, plugin_pb2, state_pb2

TRACKER = exo.Key(state_pb2.FailureTracker)
LOOP_ACTIVE = exo.Key(state_pb2.LoopActive)
NOTE = exo.Key(wrappers_pb2.StringValue, name="multi_note", scope=exo.SCOPE_MONOLOGUE,
               doc="A note multi leaves for itself.")


class Ender:
    """An extension at message_loop_end whose behaviour each test supplies."""

    def __init__(self, spec, run=None):
        self._spec, self._run = spec, run

    def spec(self):
        return self._spec

    def message_loop_end(self, call, req):
        return self._run(call, req) if self._run else None


class Multi:
    """Handles three hooks, one of them a prompt-assembly hook."""

    def __init__(self, spec):
        self._spec = spec

    def spec(self):
        return self._spec

    def tool_execute_after(self, call, req):
        return None

    def message_loop_end(self, call, req):
        return None

    def message_loop_prompts_after(self, call, req):
        return hooks_pb2.MessageLoopPromptsAfterResponse(
            prompt_blocks=[context_pb2.PromptBlock(title="MULTI", content=f"iteration {req.iteration}")])


class NoHooks:
    def spec(self):
        return exo.Spec(name="idle")


def run_none(call, args):
    return None


def multi_plugin():
    return exo.Plugin(
        name="multi_plugin", version="1.2.3",
        extensions=[Multi(exo.Spec(
            name="multi", order=40, hook_order={"message_loop_prompts_after": 90},
            reads=[TRACKER, NOTE, TRACKER], writes=[NOTE, LOOP_ACTIVE.as_flag()], resets=[LOOP_ACTIVE],
            injects_prompt=True, timeout=datetime.timedelta(milliseconds=1500, microseconds=1),
            required=True, once_per_session=True, consumes_signals=["repeat", "misformat"],
            description="Handles three hooks.", reads_history=True, reads_prompt=True,
            for_tools=["shell", "read_file", "shell"]))],
        tools=[exo.Tool("zeta", "Z.", '{"type":"object"}', run_none, prompt_file="agent.system.tool.zeta.md"),
               exo.Tool("alpha", "A.", run=run_none)],
        files=[exo.FileSpec(id="staging", path="$EXOCORTEX_HOME/staging.jsonl", access=exo.ACCESS_READ, user="multi"),
               exo.FileSpec(id="catalog", path="$PROJECT/catalog.json", access=exo.ACCESS_READ_WRITE, user="alpha")],
    )


def loop_end(client, extension, *state, reply=""):
    return client.MessageLoopEnd(hooks_pb2.MessageLoopEndRequest(call=xt.hook_call(extension, *state), reply=reply))


class ManifestTest(unittest.TestCase):
    def test_manifest_of_multi_hook_extension(self):
        with xt.served(multi_plugin()) as client:
            got = client.Manifest(manifest_pb2.ManifestRequest(protocol_version=1))

        def entry(hook, order, injects, reads_history=False, reads_prompt=False, for_tools=()):
            return manifest_pb2.ExtensionSpec(
                name="multi", hook=hook, order=order, reads=["failure_tracker", "multi_note"],
                writes=["loop_active", "multi_note"], resets=["loop_active"], injects_prompt=injects,
                timeout_ms=1501, required=True, once_per_session=True, consumes_signals=["misformat", "repeat"],
                description="Handles three hooks.", reads_history=reads_history, reads_prompt=reads_prompt,
                for_tools=for_tools)
        # reads_history only where the request has a history, reads_prompt only where
        # it has the prompt so far, for_tools only at the tool hooks (sorted, without
        # duplicates).
        want = manifest_pb2.ManifestResponse(
            plugin="multi_plugin", version="1.2.3", serves_batches=True, serves_dispatch=True,
            extensions=[entry(manifest_pb2.HOOK_MESSAGE_LOOP_PROMPTS_AFTER, 90, True, reads_history=True,
                              reads_prompt=True),
                        entry(manifest_pb2.HOOK_TOOL_EXECUTE_AFTER, 40, False, for_tools=["read_file", "shell"]),
                        entry(manifest_pb2.HOOK_MESSAGE_LOOP_END, 40, False)],
            state_keys=[manifest_pb2.StateKeySpec(name="multi_note", type="google.protobuf.StringValue",
                                                  scope=exo.SCOPE_MONOLOGUE, owner="multi",
                                                  doc="A note multi leaves for itself.")],
            tools=[manifest_pb2.ToolSpec(name="alpha", description="A.", implemented=True),
                   manifest_pb2.ToolSpec(name="zeta", description="Z.", parameters_json_schema='{"type":"object"}',
                                         implemented=True, prompt_file="agent.system.tool.zeta.md")],
            files=[manifest_pb2.FileSpec(id="catalog", path="$PROJECT/catalog.json", access=exo.ACCESS_READ_WRITE,
                                         user="alpha"),
                   manifest_pb2.FileSpec(id="staging", path="$EXOCORTEX_HOME/staging.jsonl", access=exo.ACCESS_READ,
                                         user="multi")])
        self.assertEqual(got, want)

    def test_reads_history_and_reads_prompt_only_at_their_hooks(self):
        class Everywhere:
            def spec(self):
                return exo.Spec(name="everywhere", reads_history=True, reads_prompt=True)

        def noop(self, call, req):
            return None
        for info in exo.HOOKS:
            setattr(Everywhere, info.name, noop)
        m = exo.new_server(exo.Plugin(name="p", extensions=[Everywhere()])).manifest
        got = {manifest_pb2.Hook.Name(e.hook): (e.reads_history, e.reads_prompt) for e in m.extensions}
        self.assertEqual(len(got), len(exo.HOOKS))
        self.assertEqual({h for h, (history, _) in got.items() if history},
                         {"HOOK_MESSAGE_LOOP_PROMPTS_BEFORE", "HOOK_MESSAGE_LOOP_PROMPTS_AFTER", "HOOK_MONOLOGUE_END",
                          "HOOK_BEFORE_MAIN_LLM_CALL", "HOOK_CHAT_MODEL_CALL_BEFORE"})
        self.assertEqual({h for h, (_, prompt) in got.items() if prompt},
                         {"HOOK_SYSTEM_PROMPT", "HOOK_MESSAGE_LOOP_PROMPTS_AFTER"})

    def test_manifest_is_deterministic(self):
        p = multi_plugin()
        p.extensions = list(p.extensions) + [Ender(exo.Spec(name="another"))]
        r = multi_plugin()
        r.extensions = [p.extensions[1], p.extensions[0]]
        r.tools = [p.tools[1], p.tools[0]]
        r.files = [p.files[1], p.files[0]]
        encoded = {exo.new_server(pl).Manifest(manifest_pb2.ManifestRequest(), None).SerializeToString(deterministic=True)
                   for pl in (p, r, p, r)}
        self.assertEqual(len(encoded), 1)

    def test_manifest_refuses_other_protocol_version(self):
        with xt.served(multi_plugin()) as client:
            with self.assertRaises(grpc.RpcError) as cm:
                client.Manifest(manifest_pb2.ManifestRequest(protocol_version=2))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("version", cm.exception.details())

    def test_refuses_invalid_plugins(self):
        def with_(*exts):
            return exo.Plugin(name="p", extensions=list(exts))

        str_key = exo.Key(wrappers_pb2.StringValue, name="n", scope=exo.SCOPE_SESSION)
        cases = [
            ("no name", exo.Plugin(name="", extensions=[Ender(exo.Spec(name="e"))]), ["no name"]),
            ("nothing served", exo.Plugin(name="p"), ["no extension and no tool"]),
            ("no hook", with_(NoHooks()), ['"idle"', "implements no hook"]),
            ("injects prompt off prompt hooks", with_(Ender(exo.Spec(name="e", injects_prompt=True))),
             ['"e"', "injects_prompt", "prompt-assembly hook"]),
            ("reset not written", with_(Ender(exo.Spec(name="e", resets=[LOOP_ACTIVE]))),
             ['"e"', 'resets key "loop_active"', "writes"]),
            ("plugin key named like a built-in", with_(Ender(exo.Spec(name="e", reads=[
                exo.Key(state_pb2.FailureTracker, name="failure_tracker", scope=exo.SCOPE_SESSION)]))),
             ['"e"', "built in", "exocortex.Key(FailureTracker)"]),
            ("plugin key without scope", with_(Ender(exo.Spec(name="e", writes=[
                exo.Key(wrappers_pb2.StringValue, name="n")]))), ['"e"', 'key "n"', "scope"]),
            ("not a key", with_(Ender(exo.Spec(name="e", reads=["failure_tracker"]))), ['"e"', "reads[0]", "not a key"]),
            ("plugin key declared twice differently", with_(
                Ender(exo.Spec(name="a", writes=[str_key])),
                Ender(exo.Spec(name="b", reads=[exo.Key(wrappers_pb2.Int64Value, name="n", scope=exo.SCOPE_SESSION)]))),
             ['"b"', 'key "n" is declared twice']),
            ("duplicate extension", with_(Ender(exo.Spec(name="e")), Ender(exo.Spec(name="e"))),
             ['two extensions are named "e"']),
            ("hook order for another hook", with_(Ender(exo.Spec(name="e", hook_order={manifest_pb2.HOOK_SYSTEM_PROMPT: 3}))),
             ['"e"', "system_prompt"]),
            ("hook order for no hook", with_(Ender(exo.Spec(name="e", hook_order={"message_loop_ending": 3}))),
             ['"e"', "message_loop_ending", "not a hook"]),
            ("unknown signal", with_(Ender(exo.Spec(name="e", consumes_signals=["LOOP DETECTED."]))),
             ['"e"', 'unknown signal "LOOP DETECTED."', "repeat"]),
            ("negative timeout", with_(Ender(exo.Spec(name="e", timeout=-1))), ['"e"', "negative timeout"]),
            ("order beyond 32 bits", with_(Ender(exo.Spec(name="e", order=2 ** 31))), ['"e"', "32 bits"]),
            ("for_tools off the tool hooks", with_(Ender(exo.Spec(name="e", for_tools=["shell"]))),
             ['"e"', "for_tools", "tool_execute_before, tool_execute_after, hist_add_tool_result and tool_output_update", "does not implement"]),
            ("empty name in for_tools", with_(Multi(exo.Spec(name="m", for_tools=["shell", " "]))),
             ['"m"', "an empty name in for_tools"]),
            ("for_tools as one string", with_(Multi(exo.Spec(name="m", for_tools="shell"))),
             ['"m"', "for_tools is a string", "for_tools=['shell']"]),
            ("for_tools not names", with_(Multi(exo.Spec(name="m", for_tools=["shell", 3]))),
             ['"m"', "for_tools[1] is int"]),
            ("tool without run", exo.Plugin(name="p", tools=[exo.Tool("t")]), ['tool "t"', "no run"]),
            ("tool with bad schema", exo.Plugin(name="p", tools=[exo.Tool("t", parameters="{", run=run_none)]),
             ['tool "t"', "not valid JSON"]),
            ("duplicate tool", exo.Plugin(name="p", tools=[exo.Tool("t", run=run_none), exo.Tool("t", run=run_none)]),
             ['two tools are named "t"']),
            ("file without path", exo.Plugin(name="p", tools=[exo.Tool("t", run=run_none)], files=[exo.FileSpec(id="x")]),
             ["files[0]"]),
            ("spec raises", with_(LateKey()), ["spec() raised", "exocortex.v1.Evidence", "name=..."]),
        ]
        for name, plugin, want in cases:
            with self.subTest(name):
                with self.assertRaises(exo.InvalidPlugin) as cm:
                    exo.new_server(plugin)
                for w in want:
                    self.assertIn(w, str(cm.exception))

    def test_tool_parameters_as_dict(self):
        p = exo.Plugin(name="p", tools=[exo.Tool("t", parameters={"type": "object", "properties": {}}, run=run_none)])
        m = exo.new_server(p).manifest
        self.assertEqual(m.tools[0].parameters_json_schema, '{"properties":{},"type":"object"}')


class LateKey(Ender):
    def __init__(self):
        super().__init__(None)

    def spec(self):
        return exo.Spec(name="late", reads=[exo.Key(state_pb2.Evidence)])


class KeyTest(unittest.TestCase):
    def test_every_builtin_key(self):
        # Key(Message) for every message of state.proto that carries the option
        # agrees with builtin_keys(), which reads the same descriptors.
        keys = {}
        for desc in state_pb2.DESCRIPTOR.message_types_by_name.values():
            cls = getattr(state_pb2, desc.name)
            try:
                k = exo.Key(cls)
            except ValueError:
                continue
            keys[k.name] = k
        builtins = exo.builtin_keys()
        self.assertGreaterEqual(len(builtins), 9)
        self.assertEqual(sorted(keys), [b.name for b in builtins])
        for want in builtins:
            self.assertEqual(keys[want.name].spec(), want)
            self.assertTrue(keys[want.name].builtin)
            self.assertTrue(want.scope and want.owner and want.doc, want)
        self.assertEqual(exo.Key(state_pb2.FailureTracker).name, "failure_tracker")
        la = exo.Key(state_pb2.LoopActive).spec()
        self.assertTrue(la.flag and la.type == "exocortex.v1.LoopActive" and la.scope == exo.SCOPE_SESSION)

    def test_key_of_a_message_that_is_no_key(self):
        with self.assertRaises(ValueError) as cm:
            exo.Key(state_pb2.Evidence)
        self.assertIn("exocortex.v1.Evidence", str(cm.exception))

    def test_keys_are_immutable(self):
        with self.assertRaises(AttributeError):
            TRACKER._name = "other"


class StateTest(unittest.TestCase):
    def test_round_trip(self):
        def run(call, req):
            ft = TRACKER.get(call) or state_pb2.FailureTracker()
            ft.failures["shell"] += 1
            TRACKER.set(call, ft)
            again = TRACKER.get(call)  # read-your-writes within the call
            if LOOP_ACTIVE.get(call) is not None:
                LOOP_ACTIVE.reset(call)
            return hooks_pb2.MessageLoopEndResponse(intervention=f"shell={again.failures['shell']}")

        p = exo.Plugin(name="p", extensions=[Ender(exo.Spec(name="counter", reads=[TRACKER, LOOP_ACTIVE],
                                                            writes=[TRACKER, LOOP_ACTIVE]), run)])
        with xt.served(p) as client:
            resp = loop_end(client, "counter")
            ft = xt.written(resp.changes, TRACKER)
            self.assertEqual((ft.failures["shell"], resp.intervention), (1, "shell=1"))
            self.assertFalse(xt.was_reset(resp.changes, LOOP_ACTIVE))
            resp = loop_end(client, "counter", xt.state(TRACKER, ft),
                            xt.state(LOOP_ACTIVE, state_pb2.LoopActive(active=True)))
            ft = xt.written(resp.changes, TRACKER)
            self.assertEqual((ft.failures["shell"], resp.intervention), (2, "shell=2"))
            self.assertTrue(xt.was_reset(resp.changes, LOOP_ACTIVE))
            self.assertIsNone(xt.written(resp.changes, LOOP_ACTIVE))

    def test_none_response_means_no_change(self):
        with xt.served(exo.Plugin(name="p", extensions=[Ender(exo.Spec(name="quiet"))])) as client:
            resp = loop_end(client, "quiet")
        self.assertTrue(resp.HasField("changes"))
        self.assertEqual((len(resp.changes.writes), len(resp.changes.resets)), (0, 0))
        self.assertFalse(resp.HasField("intervention") or resp.HasField("stop"))

    def test_undeclared_access_is_refused(self):
        def do_read(call):
            if TRACKER.get(call) is not None:
                raise AssertionError("get of an undeclared key returned a value")

        cases = [
            ("read", exo.Spec(name="nosy"), do_read,
             ['extension "nosy"', 'read of state key "failure_tracker"', "reads"]),
            ("write", exo.Spec(name="pushy", reads=[TRACKER]), lambda c: TRACKER.set(c, state_pb2.FailureTracker()),
             ['extension "pushy"', 'write of state key "failure_tracker"', "writes"]),
            ("reset", exo.Spec(name="eraser"), lambda c: LOOP_ACTIVE.reset(c),
             ['extension "eraser"', 'write of state key "loop_active"', "writes"]),
            ("none value", exo.Spec(name="nil_writer", writes=[TRACKER]), lambda c: TRACKER.set(c, None),
             ['extension "nil_writer"', "nil value", "reset()"]),
            ("wrong type", exo.Spec(name="mixer", writes=[TRACKER]), lambda c: TRACKER.set(c, state_pb2.LoopActive()),
             ['extension "mixer"', 'state key "failure_tracker" holds exocortex.v1.FailureTracker', "LoopActive"]),
        ]
        for name, spec, do, want in cases:
            with self.subTest(name):
                def run(call, req, do=do):
                    do(call)
                    if call.err() is None:
                        raise AssertionError("call.err() is None after a refused access")
                    return hooks_pb2.MessageLoopEndResponse(stop="should not arrive")
                with xt.served(exo.Plugin(name="p", extensions=[Ender(spec, run)])) as client:
                    with self.assertRaises(grpc.RpcError) as cm:
                        loop_end(client, spec.name, xt.state(TRACKER, state_pb2.FailureTracker()))
                self.assertEqual(cm.exception.code(), grpc.StatusCode.FAILED_PRECONDITION, cm.exception.details())
                for w in want:
                    self.assertIn(w, cm.exception.details())

    def test_value_of_another_type(self):
        def run(call, req):
            if TRACKER.get(call) is not None:
                raise AssertionError("get decoded a value of another type")

        wrong = xt.state(LOOP_ACTIVE, state_pb2.LoopActive(active=True))
        wrong.key = "failure_tracker"
        with xt.served(exo.Plugin(name="p", extensions=[Ender(exo.Spec(name="reader", reads=[TRACKER]), run)])) as c:
            with self.assertRaises(grpc.RpcError) as cm:
                loop_end(c, "reader", wrong)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn('state key "failure_tracker"', cm.exception.details())
        self.assertIn("LoopActive", cm.exception.details())

    def test_concurrent_calls(self):
        class Counter:
            def spec(self):
                return exo.Spec(name="failure_counter", reads=[TRACKER], writes=[TRACKER])

            def tool_execute_after(self, call, req):
                ft = TRACKER.get(call) or state_pb2.FailureTracker()
                ft.failures[req.tool_call.name] += 1
                TRACKER.set(call, ft)

        errors = []
        with xt.served(exo.Plugin(name="p", extensions=[Counter()])) as client:
            def worker(g):
                tool = f"tool{g}"
                for i in range(20):
                    resp = client.ToolExecuteAfter(hooks_pb2.ToolExecuteAfterRequest(
                        call=xt.hook_call("failure_counter", xt.state(TRACKER, state_pb2.FailureTracker(failures={tool: i}))),
                        tool_call=context_pb2.ToolCall(name=tool), result=context_pb2.ToolResult(error="failed")))
                    got = xt.written(resp.changes, TRACKER).failures[tool]
                    if got != i + 1:
                        errors.append(f"{tool} call {i}: {got}")
            threads = [threading.Thread(target=worker, args=(g,)) for g in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        self.assertEqual(errors, [])


class ErrorsTest(unittest.TestCase):
    def test_exception_becomes_internal_and_plugin_keeps_serving(self):
        def run(call, req):
            if req.reply == "boom":
                {}["x"]
            return hooks_pb2.MessageLoopEndResponse(intervention="fine")

        log = io.StringIO()
        p = exo.Plugin(name="p", extensions=[Ender(exo.Spec(name="fragile"), run)], logger=exo.Logger("p", log))
        with xt.served(p) as client:
            with self.assertRaises(grpc.RpcError) as cm:
                loop_end(client, "fragile", reply="boom")
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INTERNAL)
            for w in ['extension "fragile" raised at message_loop_end', "KeyError", "'x'", "at run ("]:
                self.assertIn(w, cm.exception.details())
            self.assertEqual(loop_end(client, "fragile").intervention, "fine")
        rec = json.loads(log.getvalue().splitlines()[0])
        self.assertEqual((rec["@level"], rec["extension"], rec["hook"]), ("error", "fragile", "message_loop_end"))
        self.assertIn("Traceback", rec["stack"])

    def test_extension_errors(self):
        def failing(call, req):
            raise exo.HookError("disk full")

        def status(call, req):
            raise exo.StatusError(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down")

        def wrong_type(call, req):
            return hooks_pb2.MonologueEndResponse()

        def exits(call, req):
            raise SystemExit(3)

        p = exo.Plugin(name="p", extensions=[Ender(exo.Spec(name="failing"), failing),
                                             Ender(exo.Spec(name="status"), status),
                                             Ender(exo.Spec(name="wrong_type"), wrong_type),
                                             Ender(exo.Spec(name="exits"), exits),
                                             Multi(exo.Spec(name="undeclared_blocks"))],
                       logger=exo.Logger("p", io.StringIO()))
        with xt.served(p) as client:
            def code(f):
                with self.assertRaises(grpc.RpcError) as cm:
                    f()
                return cm.exception.code(), cm.exception.details()

            c, d = code(lambda: loop_end(client, "failing"))
            self.assertEqual(c, grpc.StatusCode.UNKNOWN)
            self.assertIn('extension "failing" at message_loop_end: disk full', d)
            c, d = code(lambda: loop_end(client, "status"))
            self.assertEqual((c, d), (grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down"))
            c, d = code(lambda: loop_end(client, "wrong_type"))
            self.assertEqual(c, grpc.StatusCode.INTERNAL)
            self.assertIn("MonologueEndResponse", d)
            c, d = code(lambda: loop_end(client, "nobody"))
            self.assertEqual(c, grpc.StatusCode.NOT_FOUND)
            self.assertIn('no extension "nobody" at message_loop_end', d)
            self.assertIn("exits, failing, status, undeclared_blocks, wrong_type", d)
            c, d = code(lambda: loop_end(client, "exits"))
            self.assertEqual(c, grpc.StatusCode.INTERNAL)
            self.assertIn('extension "exits" raised at message_loop_end: SystemExit: 3', d)
            c, d = code(lambda: client.SystemPrompt(hooks_pb2.SystemPromptRequest(call=xt.hook_call("failing"))))
            self.assertEqual(c, grpc.StatusCode.NOT_FOUND)
            self.assertIn("none at this hook", d)
            c, d = code(lambda: client.MessageLoopEnd(hooks_pb2.MessageLoopEndRequest()))
            self.assertEqual(c, grpc.StatusCode.INVALID_ARGUMENT)
            c, d = code(lambda: client.MessageLoopPromptsAfter(hooks_pb2.MessageLoopPromptsAfterRequest(
                call=xt.hook_call("undeclared_blocks"))))
            self.assertEqual(c, grpc.StatusCode.FAILED_PRECONDITION)
            self.assertIn("injects_prompt", d)

    def test_prompt_blocks(self):
        with xt.served(multi_plugin()) as client:
            resp = client.MessageLoopPromptsAfter(hooks_pb2.MessageLoopPromptsAfterRequest(
                call=xt.hook_call("multi"), iteration=7))
        self.assertEqual([b.content for b in resp.prompt_blocks], ["iteration 7"])
        self.assertTrue(resp.HasField("changes"))


class DeadlineTest(unittest.TestCase):
    def test_time_remaining(self):
        seen = []

        def run(call, req):
            seen.append((call.time_remaining(), call.is_active()))

        with xt.served(exo.Plugin(name="p", extensions=[Ender(exo.Spec(name="e"), run)])) as client:
            client.MessageLoopEnd(hooks_pb2.MessageLoopEndRequest(call=xt.hook_call("e")), timeout=5)
            client.MessageLoopEnd(hooks_pb2.MessageLoopEndRequest(call=xt.hook_call("e")))
        (left, active), (none, active2) = seen
        self.assertTrue(0 < left <= 6 and active and active2, seen)
        self.assertIsNone(none)


class ToolsTest(unittest.TestCase):
    def test_tools(self):
        def upper(call, args):
            return context_pb2.ToolResult(content=args.get("text", "").upper() + " in " + call.context.session_id)

        def failing(call, args):
            raise exo.ToolError("exit status 2", context_pb2.ToolResult(content="partial output"))

        def stateful(call, args):
            TRACKER.get(call)

        def panicky(call, args):
            raise RuntimeError("tool bug")

        p = exo.Plugin(name="toolbox", tools=[exo.Tool("upper", run=upper), exo.Tool("failing", run=failing),
                                              exo.Tool("stateful", run=stateful), exo.Tool("panicky", run=panicky),
                                              exo.Tool("plain", run=lambda c, a: "just text")],
                       logger=exo.Logger("toolbox", io.StringIO()))
        with xt.served(p) as client:
            def call(name, args):
                return client.ExecuteTool(plugin_pb2.ExecuteToolRequest(
                    call=xt.hook_call(""), tool_call=context_pb2.ToolCall(id="1", name=name, args_json=args)))

            def refused(name, args):
                with self.assertRaises(grpc.RpcError) as cm:
                    call(name, args)
                return cm.exception.code(), cm.exception.details()

            self.assertEqual(call("upper", '{"text":"hi"}').result.content, "HI in sdktest-session")
            self.assertEqual(call("upper", "").result.content, " in sdktest-session")
            r = call("failing", "{}").result
            self.assertEqual((r.error, r.content), ("exit status 2", "partial output"))
            self.assertEqual(call("plain", "{}").result.content, "just text")
            c, d = refused("upper", "{not json")
            self.assertEqual(c, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn('tool "upper"', d)
            c, d = refused("missing", "{}")
            self.assertEqual(c, grpc.StatusCode.NOT_FOUND)
            self.assertIn('no tool "missing"', d)
            self.assertIn("failing, panicky, plain, stateful, upper", d)
            c, d = refused("stateful", "{}")
            self.assertEqual(c, grpc.StatusCode.FAILED_PRECONDITION)
            self.assertIn('tool "stateful"', d)
            c, d = refused("panicky", "{}")
            self.assertEqual(c, grpc.StatusCode.INTERNAL)
            self.assertIn('tool "panicky" raised at ExecuteTool: RuntimeError: tool bug', d)


class HooksTest(unittest.TestCase):
    def test_hook_table(self):
        self.assertEqual(len(exo.HOOKS), len(manifest_pb2.Hook.DESCRIPTOR.values) - 1)
        self.assertEqual(exo.hook_name(manifest_pb2.HOOK_REASONING_STREAM_CHUNK), "reasoning_stream_chunk")
        self.assertEqual(exo.hook_name(manifest_pb2.HOOK_PROCESS_CHAIN_END), "process_chain_end")
        self.assertEqual(exo.hook_name(manifest_pb2.HOOK_TEXT_EDITOR_WRITE_BEFORE), "text_editor_write_before")
        self.assertEqual(exo.hook_name(manifest_pb2.HOOK_BEFORE_MAIN_LLM_CALL), "before_main_llm_call")
        self.assertEqual([h.name for h in exo.HOOKS if h.prompt],
                         ["message_loop_prompts_before", "system_prompt", "message_loop_prompts_after"])
        for h in exo.HOOKS:
            self.assertEqual(h.request.__name__, h.method + "Request")
            self.assertEqual(h.response.__name__, h.method + "Response")


class LogTest(unittest.TestCase):
    def test_record_shape(self):
        out = io.StringIO()
        log = exo.Logger("plug", out).with_attrs(extension="e")
        log.debug("hidden")
        log.info("counted", tool="shell", failures=2)
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 1)
        rec = json.loads(lines[0])
        self.assertEqual(rec["@level"], "info")
        self.assertEqual(rec["@message"], "counted")
        self.assertEqual(rec["@module"], "plug")
        self.assertEqual((rec["extension"], rec["tool"], rec["failures"]), ("e", "shell", 2))
        datetime.datetime.strptime(rec["@timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ")

    def test_stdlib_logging(self):
        import logging
        out = io.StringIO()
        lg = logging.getLogger("exocortex.test")
        lg.propagate = False
        lg.addHandler(exo.HostLogHandler(exo.Logger("plug", out)))
        lg.warning("careful %s", "now", extra={"path": "/x"})
        rec = json.loads(out.getvalue())
        self.assertEqual((rec["@level"], rec["@message"], rec["path"], rec["logger"]),
                         ("warn", "careful now", "/x", "exocortex.test"))


class ParentWatchTest(unittest.TestCase):
    def test_gone_when_parent_changes(self):
        from exocortex.serve import watch_parent
        pids = iter([10, 10, 10, 1])
        gone = threading.Event()
        watch_parent(lambda: next(pids), 0.001, gone.set)
        self.assertTrue(gone.is_set())

    def test_gone_before_the_watch_began(self):
        from exocortex.serve import watch_parent
        gone = threading.Event()
        watch_parent(lambda: 1, 0.001, gone.set, start=4242)
        self.assertTrue(gone.is_set())

    def test_stops(self):
        from exocortex.serve import watch_parent
        stop, gone = threading.Event(), threading.Event()
        stop.set()
        watch_parent(lambda: 10, 0.001, gone.set, stop)
        self.assertFalse(gone.is_set())


if __name__ == "__main__":
    unittest.main()
