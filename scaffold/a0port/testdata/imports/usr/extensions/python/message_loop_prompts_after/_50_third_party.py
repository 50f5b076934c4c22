from helpers.extension import Extension
from agent import LoopData
import litellm
from langchain_core.prompts import ChatPromptTemplate
from openai import AsyncOpenAI
try:
    import tiktoken
except ImportError:
    tiktoken = None
import models
import json


class ThirdParty(Extension):
    async def execute(self, loop_data=LoopData(), **kwargs):
        loop_data.extras_temporary["third_party"] = json.dumps({"model": litellm.__name__})
