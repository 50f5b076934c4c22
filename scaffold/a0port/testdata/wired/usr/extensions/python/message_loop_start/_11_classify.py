from helpers.extension import Extension
from agent import LoopData


class Classify(Extension):
    """Names the domain of the operator's message for the files after it."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        text = str(loop_data.user_message or "").lower()
        self.agent.set_data("domain", "code" if "bug" in text else "chat")
