from helpers.extension import Extension


class MarkRead(Extension):
    """Marks what the model reads, and warns about it (a warning Exocortex has no field for)."""

    async def execute(self, data=None, **kwargs):
        if not data:
            return
        data["content"] = "A0-READ-SEEN\n" + data["content"]
        data["warnings"] = ["A0-WARNING read through Agent Zero"]
