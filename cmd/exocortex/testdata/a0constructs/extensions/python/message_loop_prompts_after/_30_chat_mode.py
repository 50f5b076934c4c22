from helpers.extension import Extension


class ChatMode(Extension):
    """Reads a key nothing in the tree writes (Agent Zero's UI sets it)."""

    async def execute(self, loop_data=None, **kwargs):
        mode = self.agent.get_data("chat_mode") or "normal"
        loop_data.extras_temporary["chat_mode"] = f"chat mode: {mode}"
