# Fixture written for Exocortex's tests (not Agent Zero's code), with the import
# and call shapes found in real v1.7 files: a package import of helpers
# modules, another plugin's helpers, a history read (not a mutation) and a
# prompt file the tree has no copy of.
from helpers import files, extension
from plugins._elsewhere.helpers.store import Store
from agent import LoopData


class RealImports(extension.Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        text = self.agent.history.output_text()
        loop_data.extras_temporary["seen"] = self.agent.read_prompt("missing.prompt.md", text=text)
        loop_data.extras_temporary["more"] = self.agent.read_prompt(
            "other.missing.md", text=text
        )
