from helpers.extension import Extension
from plugins.watchplug.helpers.watch import Watch


class Audit(Extension):
    async def execute(self, tool_name="", tool_args={}, **kwargs):
        w = Watch()
        w.start(self.agent, tool_name, dict(tool_args))
        await w.verdict()
