# Marks every utility-model call's message, as Agent Zero's secret masking
# rewrites call_data before the utility model sees it.
from helpers.extension import Extension


class Mark(Extension):
    async def execute(self, call_data: dict = {}, **kwargs):
        call_data["message"] = "A0MARK " + call_data["message"]
