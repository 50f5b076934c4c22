from helpers.extension import Extension


class OperatorNotification(Extension):
    """Watches operator_notification: Agent Zero has no such hook; the layer serves it by name."""

    async def execute(self, **kwargs):
        self.agent.set_data("operator_notification_calls", (self.agent.get_data("operator_notification_calls") or 0) + 1)
