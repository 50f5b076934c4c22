from helpers.extension import Extension


class Pick(Extension):
    def execute(self, data: dict = {}, **kwargs):
        data["result"] = "some-model"
