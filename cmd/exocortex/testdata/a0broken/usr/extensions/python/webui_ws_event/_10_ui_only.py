from helpers.extension import Extension


class UIOnly(Extension):
    async def execute(self, **kwargs):
        pass
