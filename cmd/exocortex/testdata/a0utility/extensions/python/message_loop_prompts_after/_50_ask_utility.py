# Asks the utility model, as Agent Zero's memory extensions do, and shows the
# main model the answer: once with a stream callback, once in the background.
from helpers.extension import Extension
from agent import LoopData


class AskUtility(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        pieces = []

        async def collect(chunk: str):
            pieces.append(chunk)

        answer = await self.agent.call_utility_model(
            system="Name the colour in one word.",
            message="A0-ASK what colour is the sky",
            callback=collect,
        )
        quiet = await self.agent.call_utility_model(
            system="Say yes or no.", message="A0-QUIET", background=True
        )
        loop_data.extras_temporary["utility"] = (
            f"A0-UTIL answer={answer} pieces={len(pieces)} joined={''.join(pieces)} quiet={quiet}"
        )
