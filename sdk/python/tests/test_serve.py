"""serve() as a process: the refusals before the handshake, the handshake line, the
go-plugin services a host uses, print() after the handshake, and a graceful stop.
(The conformance suite drives the same through the real Go host.)"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import grpc
from google.protobuf import empty_pb2

import exocortex as exo
from exocortex.serve import _goplugin_messages
from exocortex.v1 import manifest_pb2, plugin_pb2_grpc

SDK = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

PLUGIN = textwrap.dedent('''
    import exocortex as exo

    class Talker:
        def spec(self):
            return exo.Spec(name="talker")

        def agent_init(self, call, req):
            print("hello from print")

    exo.serve(exo.Plugin(name="talker", extensions=[Talker()]))
''')

INVALID = textwrap.dedent('''
    import exocortex as exo

    class Idle:
        def spec(self):
            return exo.Spec(name="idle")

    exo.serve(exo.Plugin(name="broken", extensions=[Idle()], tools=[exo.Tool("t")]))
''')


def run_script(source, env=None, **kw):
    e = dict(os.environ, PYTHONPATH=SDK, PYTHONDONTWRITEBYTECODE="1")
    e.pop(exo.MAGIC_COOKIE_KEY, None)
    e.update(env or {})
    return subprocess.Popen([sys.executable, "-c", source], env=e, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


class ServeTest(unittest.TestCase):
    def test_run_by_hand(self):
        p = run_script(PLUGIN)
        out, err = p.communicate(timeout=20)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(out, "")
        self.assertIn("is an Exocortex plugin", err)

    def test_invalid_plugin(self):
        p = run_script(INVALID, env={exo.MAGIC_COOKIE_KEY: exo.MAGIC_COOKIE_VALUE})
        out, err = p.communicate(timeout=20)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(out, "")
        self.assertIn('extension "idle" (Idle) implements no hook method', err)
        self.assertIn('tool "t" has no run function', err)

    def test_handshake_services_and_graceful_stop(self):
        with tempfile.TemporaryDirectory() as d:
            p = run_script(PLUGIN, env={exo.MAGIC_COOKIE_KEY: exo.MAGIC_COOKIE_VALUE, "PLUGIN_UNIX_SOCKET_DIR": d,
                                        "PLUGIN_PROTOCOL_VERSIONS": "1"})
            try:
                line = p.stdout.readline().strip()
                parts = line.split("|")
                self.assertEqual(parts[:3] + parts[4:], ["1", "1", "unix", "grpc", ""], line)
                self.assertEqual(os.path.dirname(parts[3]), d)
                channel = grpc.insecure_channel("unix:" + parts[3])
                m = _goplugin_messages()
                check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                            request_serializer=m["HealthCheckRequest"].SerializeToString,
                                            response_deserializer=m["HealthCheckResponse"].FromString)
                self.assertEqual(check(m["HealthCheckRequest"](service="plugin"), timeout=5).status, 1)
                stub = plugin_pb2_grpc.PluginStub(channel)
                self.assertEqual(stub.Manifest(manifest_pb2.ManifestRequest(protocol_version=1), timeout=5).plugin,
                                 "talker")
                from exocortex import testing as xt
                from exocortex.v1 import hooks_pb2
                stub.AgentInit(hooks_pb2.AgentInitRequest(call=xt.hook_call("talker")), timeout=5)
                shutdown = channel.unary_unary("/plugin.GRPCController/Shutdown",
                                               request_serializer=empty_pb2.Empty.SerializeToString,
                                               response_deserializer=empty_pb2.Empty.FromString)
                shutdown(empty_pb2.Empty(), timeout=5)
                channel.close()
                out, err = p.communicate(timeout=10)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
            self.assertEqual(p.returncode, 0, err)
            self.assertEqual(out, "", "stdout carries the handshake line only")
            printed = [json.loads(l) for l in err.splitlines() if "hello from print" in l]
            self.assertEqual(len(printed), 1, err)
            self.assertEqual((printed[0]["@level"], printed[0]["stream"]), ("info", "stdout"))
            self.assertFalse(os.path.exists(parts[3]), "the socket file is left behind")


if __name__ == "__main__":
    unittest.main()
