from helpers.extension import Extension


class NoteWrite(Extension):
    """Remembers the last file written and its length."""

    async def execute(self, data=None, **kwargs):
        if data:
            self.agent.set_data("last_write", f"{data['path']}:{data['total_lines']}")
