from helpers.extension import Extension


class Tag(Extension):
    """Tags the model's reply as it is added to the history."""

    def execute(self, data: dict = {}, **kwargs):
        args = list(data.get("args") or ())
        if len(args) > 1 and isinstance(args[1], str) and "[tagged]" not in args[1]:
            args[1] = args[1] + " [tagged]"
            data["args"] = tuple(args)
