# Fixture written for Exocortex's tests: helpers.history's output_text of the
# agent's (read-only) history.
from helpers.extension import Extension
from helpers.history import output_text
from agent import LoopData


class HistoryNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        text = output_text(self.agent.history.output(), ai_label="assistant", human_label="operator")
        lines = text.splitlines()
        loop_data.extras_temporary["keeper_history"] = (
            f"A0-MARKER-history messages={len(self.agent.history.output())} "
            f"first_label={lines[0].split(':')[0] if lines else None} keeper_said={'keep them safe' in text}"
        )
