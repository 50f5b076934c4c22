# Fixture written for Exocortex's tests: helpers.projects, runtime, file_tree
# and the workdir settings, as Agent Zero's workdir-structure extension uses them.
from helpers.extension import Extension
from helpers import projects, runtime, file_tree, files, settings
from agent import LoopData


class ProjectsNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        active = projects.get_context_project_name(self.agent.context)
        s = settings.get_settings()
        folder = s["workdir_path"]
        tree = file_tree.file_tree(folder, max_depth=2, max_files=5, ignore="*.tmp\n",
                                   sort=(file_tree.SORT_BY_NAME, file_tree.SORT_ASC))
        name = projects.exocortex_project_name()
        vars = projects.build_system_prompt_vars(name)
        same = await runtime.call_development_function(files.normalize_a0_path, folder)
        loop_data.extras_temporary["keeper_projects"] = (
            f"A0-MARKER-projects active={active} dockerized={runtime.is_dockerized()} "
            f"same={same == folder} title={vars['project_name']} "
            f"tree={'|'.join(line.split('── ')[-1] for line in tree.splitlines()[1:])}"
        )
