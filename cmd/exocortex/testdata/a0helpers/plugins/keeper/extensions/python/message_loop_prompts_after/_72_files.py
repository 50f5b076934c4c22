# Fixture written for Exocortex's tests: helpers.files within the plugin's
# directory, and a path outside the declared roots refused.
from helpers.extension import Extension
from agent import LoopData
from helpers import files


class FilesNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        path = files.get_abs_path("keeper_data", "seen.txt")
        files.write_file(path, "kept at iteration {{n}}")
        text = files.read_file(path, n=loop_data.iteration)
        try:
            files.write_file("/proc/a0-keeper-outside.txt", "x")
            outside = "written"
        except PermissionError:
            outside = "refused"
        loop_data.extras_temporary["keeper_files"] = (
            f"A0-MARKER-files {text}; exists={files.exists(path)} outside={outside}"
        )
