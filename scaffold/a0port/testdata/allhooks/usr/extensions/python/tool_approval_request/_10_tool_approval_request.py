from helpers.extension import Extension


class ToolApprovalRequest(Extension):
    """Counts its calls at tool_approval_request in agent data."""

    def execute(self, **kwargs):
        n = (self.agent.get_data("tool_approval_request_calls") or 0) + 1
        self.agent.set_data("tool_approval_request_calls", n)
