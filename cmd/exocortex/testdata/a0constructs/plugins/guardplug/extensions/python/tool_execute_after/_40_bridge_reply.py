from helpers.extension import Extension


class BridgeReply(Extension):
    """Forwards the bridge tool's result to the chat bridge. The bridge's
    client is imported only when that tool ran, as Agent Zero's integrations
    do, so the file loads without it."""

    async def execute(self, tool_name: str = "", response=None, **kwargs):
        if tool_name != "bridge_send":
            return
        from usr.plugins.guardplug.helpers.bridge import send
        send(response.message if response else "")
