from helpers.extension import Extension
from helpers.errors import HandledException
from usr.plugins.guardplug.helpers.rules import forbidden


class RuleGuard(Extension):
    """Refuses a write or a command that touches a forbidden path, by raising,
    as a rule enforcer does in Agent Zero."""

    async def execute(self, tool_name: str = "", tool_args: dict = {}, **kwargs):
        text = " ".join(str(v) for v in (tool_args or {}).values())
        if forbidden(text):
            raise HandledException(f"rule 7: {tool_name} may not touch {text!r}")
