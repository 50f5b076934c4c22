from helpers.extension import Extension
from agent import LoopData


class TextEditorWriteBefore(Extension):
    """Counts its calls at text_editor_write_before in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("text_editor_write_before_calls") or 0) + 1
        self.agent.set_data("text_editor_write_before_calls", n)
