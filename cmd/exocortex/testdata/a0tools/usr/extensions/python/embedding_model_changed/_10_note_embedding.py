from helpers.extension import Extension


class NoteEmbedding(Extension):
    """Notes that the memory must be re-embedded."""

    async def execute(self, **kwargs):
        self.agent.set_data("reembed", "pending")
