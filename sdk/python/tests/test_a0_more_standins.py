"""The stand-ins for Agent Zero's projects, file_tree, strings, message_queue,
skills, runtime and the Agent calls with no counterpart, on files of a temporary
plugin directory and project. The end-to-end proof, in a real plugin process on
the real host, is TestPortedHelperStandIns; the guard that does not load,
TestPortedGuardThatDoesNotLoadFailsClosed."""

import asyncio
import json
import os
import tempfile
import unittest
from unittest import mock

from exocortex.a0 import _agent_calls, _runtime, _unloaded, file_tree, message_queue, projects, runtime, skills, strings, update_check


class Ctx:
    def __init__(self):
        self.data = {}

    def get_data(self, key):
        return self.data.get(key)

    def set_data(self, key, value):
        self.data[key] = value


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class Dirs(unittest.TestCase):
    def setUp(self):
        self.plugin = tempfile.mkdtemp()
        self.project = tempfile.mkdtemp()
        env = mock.patch.dict(os.environ, {"EXOCORTEX_PROJECT": self.project})
        env.start()
        self.addCleanup(env.stop)
        _runtime.configure(self.plugin, "a0-test")


class FileTreeTest(Dirs):
    def test_limits_and_ignores(self):
        for f in ["b.txt", "a.txt", "c.log", "d.txt", "sub/x.py", "sub/deep/y.py", "node_modules/m.js"]:
            write(os.path.join(self.project, f), "x")
        tests = [
            ("everything by name", dict(sort=("name", "asc")), ["sub/", "deep/", "y.py", "x.py", "a.txt", "b.txt", "c.log", "d.txt"], []),
            ("ignored", dict(sort=("name", "asc"), ignore="*.log\nnode_modules/\n!keep.log"), ["a.txt"], ["c.log", "m.js"]),
            ("depth 1", dict(sort=("name", "asc"), max_depth=1), ["sub/", "a.txt"], ["x.py"]),
            ("Agent Zero's default patterns", dict(sort=("name", "asc"), ignore="**/node_modules/**\nvenv/**\n**/deep/**"), ["x.py"], ["m.js", "deep/", "y.py"]),
            ("anchored", dict(sort=("name", "asc"), ignore="/sub/x.py\n/a.txt"), ["y.py", "b.txt"], ["x.py", "a.txt"]),
            ("two files a folder", dict(sort=("name", "asc"), max_files=2, ignore="node_modules/"), ["a.txt", "b.txt", "# 2 more files"], ["d.txt"]),
        ]
        for name, kw, want, absent in tests:
            with self.subTest(name):
                text = file_tree.file_tree(self.project, **kw)
                for w in want:
                    self.assertIn(w, text)
                for a in absent:
                    self.assertNotIn(a, text)
                self.assertTrue(text.startswith(self.project.rstrip("/") + "/"))

    def test_not_a_folder(self):
        with self.assertRaisesRegex(FileNotFoundError, "is not a folder"):
            file_tree.file_tree(os.path.join(self.project, "nothing"))


class ProjectsTest(Dirs):
    def test_the_project_directory(self):
        name = projects.exocortex_project_name()
        self.assertEqual(projects.get_project_folder(name), self.project)
        self.assertIsNone(projects.get_context_project_name(Ctx()))
        write(os.path.join(self.project, ".a0proj", "project.json"),
              json.dumps({"title": "Shelf", "instructions": "Keep it tidy.", "file_structure": {"max_depth": 2}}))
        write(os.path.join(self.project, ".a0proj", "instructions", "extra.md"), " Label every box.")
        v = projects.build_system_prompt_vars(name)
        self.assertEqual((v["project_name"], v["project_path"]), ("Shelf", self.project))
        self.assertEqual(v["project_instructions"], "Keep it tidy. Label every box.")
        self.assertEqual(projects.load_basic_project_data(name)["file_structure"]["max_depth"], 2)
        self.assertIn("└── project.json", projects.get_file_structure(name))

    def test_changes_refused(self):
        with self.assertRaisesRegex(projects.NoCounterpart, "activate_project"):
            projects.activate_project("ctx", "other")


class StringsTest(Dirs):
    def test_includes_and_cuts(self):
        write(os.path.join(self.plugin, "note.txt"), "NOTE")
        self.assertEqual(strings.replace_file_includes("a §§include(note.txt) b §§include(none.txt)"),
                         "a NOTE b §§include(none.txt)")
        tests = [("abcdefghij", 7, "..", 0.5, "ab..hij"), ("abcdefghij", 7, "..", 0.0, "..fghij"),
                 ("abcdefghij", 7, "..", 1.0, "abcde.."), ("abc", 7, "..", 0.5, "abc")]
        for text, n, rep, ratio, want in tests:
            with self.subTest(ratio=ratio, text=text):
                self.assertEqual(strings.truncate_text_by_ratio(text, n, rep, ratio), want)
        self.assertEqual(strings.format_key("maxDepth_of tree"), "Max Depth Of Tree")


class QueueTest(unittest.TestCase):
    def test_queue_in_the_context(self):
        ctx = Ctx()
        self.assertFalse(message_queue.has_queue(ctx))
        self.assertFalse(message_queue.send_next(ctx))
        self.assertEqual(message_queue.send_all_aggregated(ctx), 0)
        item = message_queue.add(ctx, "hello")
        self.assertEqual(ctx.data[message_queue.QUEUE_KEY], [item])
        with self.assertRaisesRegex(message_queue.NoCounterpart, "send_next: 1 queued"):
            message_queue.send_next(ctx)
        self.assertEqual(message_queue.pop_item(ctx, item["id"])["text"], "hello")


class SkillsTest(Dirs):
    def test_found_and_loaded(self):
        write(os.path.join(self.plugin, "skills", "shelf", "SKILL.md"),
              "---\nname: shelf-keeping\ndescription: keep the shelf\ntags: [home, order]\n---\nSort by colour.\n")
        write(os.path.join(self.project, "skills", "other", "SKILL.md"), "---\nname: shelf-keeping\ndescription: shadowed\n---\n")
        write(os.path.join(self.plugin, "skills", "shelf", "labels.txt"), "x")
        found = skills.list_skills()
        self.assertEqual([(s.name, s.description) for s in found], [("shelf-keeping", "keep the shelf")])
        text = skills.load_skill_for_agent("shelf keeping")
        for want in ["Skill: shelf-keeping", "Tags: home, order", "Sort by colour.", "labels.txt"]:
            self.assertIn(want, text)
        self.assertEqual(skills.load_skill_for_agent("none"), "Error: skill 'none' not found")


class RuntimeTest(unittest.TestCase):
    def test_runs_here(self):
        async def double(x):
            return 2 * x
        self.assertFalse(runtime.is_dockerized())
        self.assertTrue(runtime.is_development())
        self.assertEqual(asyncio.run(runtime.call_development_function(double, 21)), 42)
        self.assertEqual(runtime.call_development_function_sync(len, "abc"), 3)


class UpdateCheckTest(unittest.TestCase):
    def test_nothing_new(self):
        # Agent Zero's caller reads version.get("notification"): none here.
        version = asyncio.run(update_check.check_version())
        self.assertIsNone(version.get("notification"))


class AgentCallsTest(unittest.TestCase):
    def test_each_raises_naming_itself(self):
        agent = _agent_calls.NoCounterpartCalls()
        for name in ["hist_add_ai_response", "hist_add_warning", "handle_intervention", "get_chat_model"]:
            with self.subTest(name):
                with self.assertRaisesRegex(_agent_calls.NoCounterpart, f"Agent.{name} has no counterpart"):
                    getattr(agent, name)("x")


class UnloadedGuardTest(unittest.TestCase):
    def test_gates_and_raises(self):
        self.assertTrue(_unloaded.gates("tool_execute_before"))
        self.assertTrue(_unloaded.gates("text_editor_write_before"))
        self.assertFalse(_unloaded.gates("message_loop_end"))
        g = _unloaded.UnloadedGuard("/x/_10_scan.py", "tool_execute_before", 10, "a0_scan", "ModuleNotFoundError: no scanner")
        self.assertEqual((g.spec().name, g.spec().order), ("a0_scan", 10))
        with self.assertRaisesRegex(_unloaded.GuardNotLoaded, "_10_scan.py did not load .*no scanner"):
            g.tool_execute_before(None, None)


if __name__ == "__main__":
    unittest.main()
