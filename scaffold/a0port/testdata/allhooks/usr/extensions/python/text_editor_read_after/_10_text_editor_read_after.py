from helpers.extension import Extension
from agent import LoopData


class TextEditorReadAfter(Extension):
    """Counts its calls at text_editor_read_after in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("text_editor_read_after_calls") or 0) + 1
        self.agent.set_data("text_editor_read_after_calls", n)
