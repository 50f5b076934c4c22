# Tags the utility model's answer.
from helpers.extension import Extension


class Tag(Extension):
    async def execute(self, call_data: dict = {}, **kwargs):
        call_data["response"] = call_data["response"].strip() + "+tagged"
