from helpers.extension import Extension
from agent import LoopData


class Report(Extension):
    """Shows the model what the model-side hooks saw."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        loop_data.extras_temporary["a0_seen"] = "A0-SEEN sent=%s streamed=%s thought=%s last=%s" % (
            self.agent.get_data("sent_messages"), self.agent.get_data("streamed"),
            self.agent.get_data("thought"), self.agent.get_data("last_answer"))
