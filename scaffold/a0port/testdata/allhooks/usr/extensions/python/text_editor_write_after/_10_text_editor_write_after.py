from helpers.extension import Extension
from agent import LoopData


class TextEditorWriteAfter(Extension):
    """Counts its calls at text_editor_write_after in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("text_editor_write_after_calls") or 0) + 1
        self.agent.set_data("text_editor_write_after_calls", n)
