# Fixture written for Exocortex's tests: helpers.errors' exception classes and
# format_error, and helpers.print_style printing to the plugin's log.
from helpers.extension import Extension
from helpers import errors
from helpers.errors import RepairableException
from helpers.print_style import PrintStyle
from agent import LoopData


def failing():
    raise RepairableException("the keeper cannot reach its shelf")


class ErrorsNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        try:
            failing()
        except Exception as e:
            text = errors.format_error(e)
        PrintStyle(font_color="green").print("A0-LOG-print-style from the keeper")
        PrintStyle.error("A0-LOG-print-style error from the keeper")
        self.agent.context.log.log(type="info", heading="A0-LOG-context-log from the keeper")
        last = text.strip().splitlines()[-1]
        loop_data.extras_temporary["keeper_errors"] = (
            f"A0-MARKER-errors last={last} traced={'failing' in text}"
        )
