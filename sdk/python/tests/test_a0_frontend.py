"""The stand-ins the hooks around the loop and the infection check need:
helpers.cache, helpers.dotenv, langchain_core.messages, the utility model
object (its messages made into one system text and one message), the
banners' HTML read as text, the whole-JSON prompt unfenced. The end-to-end
proof, in a real plugin process on the real host, is TestPortedFrontendHooks."""

import asyncio
import os
import tempfile
import unittest
from unittest import mock

from exocortex.a0 import _kwargs, _runtime, cache, dotenv, models, prompts
from exocortex.a0.langchain_messages import AIMessage, HumanMessage, SystemMessage


class Cache(unittest.TestCase):
    def setUp(self):
        cache.clear_all()

    def test_add_get_trim(self):
        cases = [("kept", 0.0, True), ("trimmed", 400.0, False)]
        for key, age, kept in cases:
            with self.subTest(key):
                cache.add("area", key, key.upper())
                cache._cache["area"][key].last_used -= age
                cache.trim_cache("*", seconds=300)
                self.assertEqual(cache.has("area", key), kept)

    def test_disabled_area_keeps_nothing(self):
        cache.toggle_area("off", False)
        cache.add("off", "k", 1)
        self.assertEqual(cache.get("off", "k", "default"), "default")
        cache.toggle_area("off", True)


class Dotenv(unittest.TestCase):
    def test_environment_over_usr_env(self):
        plugin = tempfile.mkdtemp()
        _runtime.configure(plugin, "p")
        os.makedirs(os.path.join(plugin, "usr"))
        with open(os.path.join(plugin, "usr", ".env"), "w") as f:
            f.write("# comment\nA0_T_FILE='from file'\nexport A0_T_BOTH=file\n")
        with mock.patch.dict(os.environ, {"A0_T_BOTH": "env"}):  # restores what load_dotenv set
            self.assertEqual(dotenv.get_dotenv_value("A0_T_FILE"), "from file")
            self.assertEqual(dotenv.get_dotenv_value("A0_T_BOTH"), "env")
            self.assertEqual(dotenv.get_dotenv_value("A0_T_NONE", "d"), "d")
            dotenv.save_dotenv_value("A0_T_NEW", "v")
            with open(os.path.join(plugin, "usr", ".env")) as f:
                self.assertIn("A0_T_NEW=v", f.read())


class Messages(unittest.TestCase):
    def test_split(self):
        cases = [
            ("one human", [SystemMessage(content="sys"), HumanMessage(content="hi")], ("sys", "hi")),
            ("a conversation", [SystemMessage("s1"), HumanMessage("q"), AIMessage("a"), HumanMessage("q2")],
             ("s1", "user: q\nassistant: a\nuser: q2")),
            ("dicts and parts", [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "t"}]}],
             ("s", "t")),
        ]
        for name, msgs, want in cases:
            with self.subTest(name):
                self.assertEqual(models.split_messages(msgs), want)

    def test_unified_call_asks_the_utility_model(self):
        seen = {}

        class Call:
            def call_utility_model(self, system, message, on_delta=None):
                seen["args"] = (system, message)
                if on_delta:
                    on_delta("ab")
                    on_delta("c")
                return "abc"

        class Agent:
            _call = Call()

        pieces = []
        text, reasoning = asyncio.run(models.UtilityModel(Agent()).unified_call(
            messages=[SystemMessage(content="judge"), HumanMessage(content="this")],
            response_callback=lambda chunk, full: pieces.append((chunk, full))))
        self.assertEqual((text, reasoning), ("abc", ""))
        self.assertEqual(seen["args"], ("judge", "this"))
        self.assertEqual(pieces, [("ab", "ab"), ("c", "abc")])


class Banners(unittest.TestCase):
    def test_html_as_text(self):
        self.assertEqual(_kwargs._html_text("<b>Hi</b> &amp; <a href='#'>go</a><br>next  line"), "Hi & go\nnext line")


class Prompts(unittest.TestCase):
    def test_unfence_json(self):
        cases = [("```json\n{\"a\": 1}\n```\n", "{\"a\": 1}"), ("text ```json\n{}\n```", "text ```json\n{}\n```")]
        for text, want in cases:
            with self.subTest(text):
                self.assertEqual(prompts.unfence_json(text), want)


if __name__ == "__main__":
    unittest.main()
