from helpers.extension import Extension


class ToolApprovalRequest(Extension):
    """Watches tool_approval_request: Agent Zero has no such hook; the layer serves it by name."""

    async def execute(self, **kwargs):
        self.agent.set_data("tool_approval_request_calls", (self.agent.get_data("tool_approval_request_calls") or 0) + 1)
