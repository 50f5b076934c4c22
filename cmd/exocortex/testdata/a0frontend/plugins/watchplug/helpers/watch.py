import asyncio
from helpers.errors import HandledException
from langchain_core.messages import HumanMessage, SystemMessage


class Watch:
    def __init__(self):
        self.task = None

    def start(self, agent, tool_name, tool_args):
        msgs = [SystemMessage(content="FIXTURE-AUDITOR judge the call"),
                HumanMessage(content=f"tool {tool_name} args {sorted(tool_args.items())}")]
        self.task = asyncio.create_task(agent.get_utility_model().unified_call(messages=msgs))

    async def verdict(self):
        text, _ = await self.task
        if "<terminate/>" in text:
            raise HandledException(Exception("the auditor stopped it: " + text))
