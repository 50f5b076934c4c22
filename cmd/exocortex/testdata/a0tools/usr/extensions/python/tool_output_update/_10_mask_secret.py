from helpers.extension import Extension


class MaskSecret(Extension):
    """Masks a secret in a running tool's output before it is shown."""

    async def execute(self, ctx=None, **kwargs):
        if ctx is not None:
            ctx["content"] = ctx["content"].replace("secret", "A0-MASKED")
