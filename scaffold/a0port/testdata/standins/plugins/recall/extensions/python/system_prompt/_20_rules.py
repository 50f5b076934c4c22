# Fixture written for Exocortex's tests: a package import of the memory
# plugin's helpers, helpers.files, and a module the layer has no stand-in for.
from helpers.extension import Extension
from helpers import files
from plugins._memory.helpers import memory


class Rules(Extension):
    async def execute(self, system_prompt=[], loop_data=None, **kwargs):
        path = files.get_abs_path(memory.get_memory_subdir_abs(self.agent), "rules.md")
        if files.exists(path):
            system_prompt.append(files.read_file(path))
