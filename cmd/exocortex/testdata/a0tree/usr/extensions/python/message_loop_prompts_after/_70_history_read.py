# Fixture written for Exocortex's tests (not Agent Zero's code): reads the
# history the way real v1.7 memory recall does (agent.history.output_text() and
# loop_data.user_message.output_text()) and puts what it saw into the extras.
from agent import LoopData
from helpers.extension import Extension


class HistoryRead(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        seen = "USER-QUESTION-42" in self.agent.history.output_text()
        asked = loop_data.user_message.output_text() if loop_data.user_message else "None"
        loop_data.extras_temporary["history_read"] = f"A0-MARKER-history seen={seen} asked={asked}"
