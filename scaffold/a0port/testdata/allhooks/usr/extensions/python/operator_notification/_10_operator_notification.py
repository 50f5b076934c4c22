from helpers.extension import Extension


class OperatorNotification(Extension):
    """Counts its calls at operator_notification in agent data."""

    def execute(self, **kwargs):
        n = (self.agent.get_data("operator_notification_calls") or 0) + 1
        self.agent.set_data("operator_notification_calls", n)
