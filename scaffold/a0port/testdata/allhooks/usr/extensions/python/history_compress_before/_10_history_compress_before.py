from helpers.extension import Extension


class HistoryCompressBefore(Extension):
    """Counts its calls at history_compress_before in agent data."""

    def execute(self, **kwargs):
        n = (self.agent.get_data("history_compress_before_calls") or 0) + 1
        self.agent.set_data("history_compress_before_calls", n)
