from helpers.extension import Extension
from agent import LoopData


class EmbeddingModelChanged(Extension):
    """Counts its calls at embedding_model_changed in agent data."""

    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("embedding_model_changed_calls") or 0) + 1
        self.agent.set_data("embedding_model_changed_calls", n)
