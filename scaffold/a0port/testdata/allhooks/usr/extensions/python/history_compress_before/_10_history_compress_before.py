from helpers.extension import Extension


class HistoryCompressBefore(Extension):
    """Watches history_compress_before: Agent Zero has no such hook; the layer serves it by name."""

    async def execute(self, **kwargs):
        self.agent.set_data("history_compress_before_calls", (self.agent.get_data("history_compress_before_calls") or 0) + 1)
