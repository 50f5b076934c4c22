"""The Agent Zero helper stand-ins that read what the host tells a ported plugin
(exocortex/a0/_host.py): tokens by the host's estimate, the read-only settings,
the host's zone, the tool catalog, a chat's folder. The end-to-end proof, in a
real plugin process on the real host, is TestPortedHelperStandIns."""

import math
import os
import tempfile
import unittest
from datetime import datetime, timezone
from unittest import mock

from google.protobuf import struct_pb2

from exocortex.a0 import _host, _runtime, localization, persist_chat, settings, tokens, tool_policy
from exocortex.v1 import context_pb2, hooks_pb2, manifest_pb2


def request(factor=None, tools=None):
    """A system_prompt request whose context carries the host's token factor."""
    ctx = context_pb2.Context(session_id="sess-1", model="m:1b")
    if factor is not None:
        ctx.custom_data.fields["exocortex_tokens_per_byte"].number_value = factor
        ctx.custom_data.fields["exocortex_message_overhead"].number_value = 6
        ctx.custom_data.fields["exocortex_num_ctx"].number_value = 4096
    return hooks_pb2.SystemPromptRequest(call=context_pb2.HookCall(context=ctx),
                                         tools=[manifest_pb2.ToolSpec(name=t, description=f"{t} tool") for t in tools or []])


class HostStateTest(unittest.TestCase):
    def setUp(self):
        self.saved = dict(_host._seen)
        for k in _host._seen:
            _host._seen[k] = None

    def tearDown(self):
        _host._seen.update(self.saved)


class TokensTest(HostStateTest):
    def test_counts_by_the_hosts_factor(self):
        text = "x" * 300
        tests = [
            ("before the host said anything: its initial 1/3", None, 100),
            ("the host's calibrated factor", 0.25, 75),
            ("a factor that does not divide evenly rounds up", 0.2627, math.ceil(300 * 0.2627)),
        ]
        for name, factor, want in tests:
            with self.subTest(name):
                if factor is not None:
                    _host.observe(request(factor))
                self.assertEqual(tokens.count_tokens(text), want)
                self.assertEqual(tokens.approximate_tokens(text), int(want * tokens.APPROX_BUFFER))
        self.assertEqual(tokens.count_message_tokens(text), 6 + tokens.count_tokens(text))
        self.assertEqual(tokens.count_tokens(""), 0)

    def test_trim(self):
        text = "".join(f"word{i} " for i in range(200))
        for direction, check in (("start", lambda t: t.startswith("word0 ") and t.endswith("...")),
                                 ("end", lambda t: t.startswith("...") and t.endswith("word199 "))):
            with self.subTest(direction):
                got = tokens.trim_to_tokens(text, 20, direction)
                self.assertTrue(check(got), got)
                self.assertLessEqual(tokens.count_tokens(got), 20)
        self.assertEqual(tokens.trim_to_tokens("short", 20), "short")
        with self.assertRaisesRegex(ValueError, "direction 'middle'"):
            tokens.trim_to_tokens(text, 5, "middle")


class SettingsTest(unittest.TestCase):
    def test_read_only_view(self):
        env = {_host.ENV_SETTINGS: '{"model": "qwen3:8b", "utility_model": "qwen3:1.7b", "num_ctx": 8192, '
                                   '"provider": "ollama", "embedder": "ollama:nomic-embed-text"}'}
        with mock.patch.dict(os.environ, env):
            s = settings.get_settings()
            tests = [("chat_model_name", "qwen3:8b"), ("util_model_name", "qwen3:1.7b"),
                     ("embed_model_provider", "ollama"), ("embed_model_name", "nomic-embed-text"),
                     ("exocortex_num_ctx", 8192)]
            for key, want in tests:
                with self.subTest(key):
                    self.assertEqual(s[key], want)
            self.assertEqual(s.get("telemetry_enabled", "unset"), "unset")
            with self.assertRaisesRegex(KeyError, "telemetry_enabled.*has no counterpart"):
                s["telemetry_enabled"]
            writes = [("item", lambda: s.__setitem__("chat_model_name", "x"), r"get_settings\(\)\['chat_model_name'\]"),
                      ("update", lambda: s.update({}), r"update"),
                      ("set_settings", lambda: settings.set_settings({}), "set_settings"),
                      ("set_settings_delta", lambda: settings.set_settings_delta({}), "set_settings_delta")]
            for name, write, named in writes:
                with self.subTest(name):
                    with self.assertRaisesRegex(settings.SettingsReadOnly, named):
                        write()
            self.assertEqual(settings.get_settings()["chat_model_name"], "qwen3:8b")

    def test_bad_settings_named(self):
        with mock.patch.dict(os.environ, {_host.ENV_SETTINGS: "{not json"}):
            with self.assertRaisesRegex(ValueError, _host.ENV_SETTINGS):
                settings.get_settings()


class LocalizationTest(unittest.TestCase):
    def test_host_zone(self):
        tests = [("Europe/Berlin", "2026-01-15 13:00+01:00", "12:30"),
                 ("UTC", "2026-01-15 12:00+00:00", "14:30")]
        for tz, noon, summer in tests:
            with self.subTest(tz), mock.patch.dict(os.environ, {"TZ": tz}):
                loc = localization.Localization()
                self.assertEqual(loc.get_timezone(), tz)
                got = loc.utc_dt_to_localtime_str(datetime(2026, 1, 15, 12, tzinfo=timezone.utc), sep=" ", timespec="minutes")
                self.assertEqual(got, noon)
                self.assertEqual(loc.localtime_str_to_utc_dt("2026-07-15 14:30").strftime("%H:%M"), summer)
        with mock.patch.dict(os.environ, {"TZ": "Not/AZone"}):
            self.assertNotEqual(localization.Localization().get_timezone(), "Not/AZone")  # the system's zone, or UTC
        loc = localization.Localization("Asia/Tokyo")
        loc.set_timezone("Not/AZone")
        self.assertEqual(loc.get_timezone(), "Asia/Tokyo")
        self.assertIsNone(loc.localtime_str_to_utc_dt("yesterday"))


class ToolPolicyTest(HostStateTest):
    def test_host_catalog(self):
        prompts = [("agent.system.tool.memory_load.md", "load"), ("agent.system.tool.gone.md", "gone"),
                   ("agent.system.tools.md", "all tools")]
        self.assertEqual(tool_policy.filter_tool_prompts(None, prompts), ["load", "gone", "all tools"])
        self.assertEqual(tool_policy.get_policy()["mode"], "inherit")
        _host.observe(request(tools=["memory_load", "response"]))
        self.assertEqual(tool_policy.filter_tool_prompts(None, prompts), ["load", "", "all tools"])
        self.assertTrue(tool_policy.resolve_tool(None, "response").allowed)
        self.assertFalse(tool_policy.resolve_tool(None, "gone").allowed)
        with self.assertRaisesRegex(Exception, 'Tool "gone" is not available'):
            tool_policy.ensure_tool_allowed(None, "gone")
        self.assertEqual([t["name"] for t in tool_policy.get_tool_catalog()], ["memory_load"])


class PersistChatTest(unittest.TestCase):
    def test_folder_in_the_plugin(self):
        with tempfile.TemporaryDirectory() as d:
            saved = _runtime._runtime[0]
            try:
                _runtime.configure(d, "a0-test")
                tests = [("the layer's context id: the session's folder (no call: default)", "exocortex", "default"),
                         ("an id made safe", "../x y", "x_y")]
                for name, ctxid, folder in tests:
                    with self.subTest(name):
                        self.assertEqual(persist_chat.get_chat_msg_files_folder(ctxid),
                                         os.path.join(d, "chats", folder, "messages"))
                self.assertIsNone(persist_chat.save_tmp_chat(None))
                with self.assertRaisesRegex(persist_chat.NoCounterpart, "remove_chat"):
                    persist_chat.remove_chat("x")
            finally:
                _runtime._runtime[0] = saved


if __name__ == "__main__":
    unittest.main()
