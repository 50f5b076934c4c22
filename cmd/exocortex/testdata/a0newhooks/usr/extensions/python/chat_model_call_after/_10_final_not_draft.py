from helpers.extension import Extension
from agent import LoopData


class FinalNotDraft(Extension):
    """Agent Zero hands call_data with the model's response; the changed response is
    what the agent acts on."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        call_data = kwargs.get("call_data") or {}
        call_data["response"] = call_data.get("response", "").replace("DRAFT", "FINAL")
