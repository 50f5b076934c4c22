"""Agent Zero's prompt files as the layer reads them (exocortex/a0/prompts.py)
and the stand-in parts of the layer's Agent the v1.7 tree's files use (the log's
items and progress, the history's compress and is_over_limit, agent.config,
memory.reload). The end-to-end proof, a ported tree in a real plugin process on
the real host, is cmd/exocortex's TestPortedConstructsRun."""

import asyncio
import os
import sys
import tempfile
import textwrap
import unittest

from exocortex import a0compat
from exocortex.a0 import memory, prompts


def write(d, name, text):
    with open(os.path.join(d, name), "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(text))


class PromptsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.lower = tempfile.mkdtemp()
        # The variables file imports helpers.files as a ported tree's does;
        # a shim package like the one the port writes.
        self.shims = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.shims, "helpers"))
        write(self.shims, "helpers/__init__.py", "")
        write(self.shims, "helpers/files.py", "from exocortex.a0.files import *  # noqa\n")
        sys.path.insert(0, self.shims)
        saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "helpers" or k.startswith("helpers.")}
        self.addCleanup(self._restore, saved)

    def _restore(self, saved):
        sys.path.remove(self.shims)
        for k in [k for k in sys.modules if k == "helpers" or k.startswith("helpers.")]:
            del sys.modules[k]
        sys.modules.update(saved)

    def test_include_variables_conditions(self):
        write(self.dir, "main.md", """\
            # Manual
            {{ include "role.md" }}
            {{if verbose}}long {{name}}{{endif}}{{if not verbose}}short{{endif}}
            in {{workdir}}
            """)
        write(self.dir, "role.md", "Role: {{who}}; here {{ workdir }}\n")
        write(self.dir, "main.py", """\
            from helpers.files import VariablesPlugin
            class V(VariablesPlugin):
                def get_variables(self, file, backup_dirs=None, **kwargs):
                    return {"workdir": "/w", "verbose": True, "name": "N"}
            """)
        got = prompts.read("main.md", [self.dir], who="me")
        # The include gets the caller's arguments, not the file's variables, as
        # in Agent Zero: its {{ workdir }} stays.
        self.assertEqual(got, "# Manual\nRole: me; here {{ workdir }}\n\nlong N\nin /w\n")

    def test_include_original_and_missing(self):
        write(self.dir, "tips.md", "mine\n{{ include original }}")
        write(self.lower, "tips.md", "theirs\n")
        self.assertEqual(prompts.read("tips.md", [self.dir, self.lower]), "mine\ntheirs\n")
        write(self.dir, "bad.md", '{{ include "gone.md" }}')
        with self.assertRaisesRegex(FileNotFoundError, "gone.md"):
            prompts.read("bad.md", [self.dir])

    def test_variables_file_that_fails_leaves_placeholders(self):
        write(self.dir, "v.md", "at {{where}}\n")
        write(self.dir, "v.py", "import helpers.no_such_module\n")
        self.assertEqual(prompts.read("v.md", [self.dir]), "at {{where}}\n")

    def test_self_include_is_an_error(self):
        write(self.dir, "loop.md", '{{ include "loop.md" }}')
        with self.assertRaisesRegex(ValueError, "includes itself"):
            prompts.read("loop.md", [self.dir])


class StandInsTest(unittest.TestCase):
    def test_log_keeps_items_and_progress(self):
        agent = a0compat.Agent({}, "x")
        log = agent.context.log
        self.assertEqual(log.progress, "Waiting for input")
        item = log.log(type="info", heading="h", content="c", id="7")
        item.update(content="c2")
        self.assertEqual([i.content for i in log.logs], ["c2"])
        self.assertEqual(log.logs[0].id, "7")
        log.set_progress("working")
        self.assertEqual((log.progress, log.progress_active), ("working", True))
        log.set_initial_progress()
        self.assertEqual((log.progress, log.progress_active), ("Waiting for input", False))
        self.assertEqual(log.output()[0]["heading"], "h")

    def test_history_config_memory(self):
        agent = a0compat.Agent({}, "x")
        self.assertFalse(agent.history.is_over_limit())
        self.assertFalse(asyncio.run(agent.history.compress()))
        self.assertEqual(agent.history.remove_all_embeds(), 0)
        self.assertEqual(agent.config.profile, "")
        agent.config = a0compat.AgentConfig(profile="coder")
        self.assertEqual(agent.config.profile, "coder")
        self.assertIsNone(memory.reload())


if __name__ == "__main__":
    unittest.main()
