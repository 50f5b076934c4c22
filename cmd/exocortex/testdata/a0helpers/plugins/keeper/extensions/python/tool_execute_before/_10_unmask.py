# Fixture written for Exocortex's tests: helpers.secrets puts the secret values
# back into a tool's arguments (the model wrote placeholders).
from helpers.extension import Extension
from helpers.secrets import get_secrets_manager


class UnmaskArgs(Extension):
    async def execute(self, **kwargs):
        tool_args = kwargs.get("tool_args")
        if not tool_args:
            return
        mgr = get_secrets_manager(self.agent.context)
        for k, v in tool_args.items():
            if isinstance(v, str):
                tool_args[k] = mgr.replace_placeholders(v)
