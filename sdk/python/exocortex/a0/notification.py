"""Agent Zero's helpers.notification: notices for the operator (Agent Zero
shows them in its web UI), written here to the plugin's log, which the host
shows the operator, at the level of the notice's type."""

from __future__ import annotations

import time
from enum import Enum
from typing import Any, List, Optional

from exocortex.a0 import _runtime, guids


class NotificationType(Enum):
    INFO = "info"
    SUCCESS = "success"
    WARNING = "warning"
    ERROR = "error"
    PROGRESS = "progress"


class NotificationPriority(Enum):
    NORMAL = 10
    HIGH = 20


class NotificationItem:
    def __init__(self, type: Any, priority: Any, message: str, title: str = "", detail: str = "",
                 display_time: int = 3, group: str = "", id: str = "") -> None:
        self.type, self.priority, self.message, self.title = type, priority, message, title
        self.detail, self.display_time, self.group = detail, display_time, group
        self.id = id or guids.generate_id()
        self.timestamp = time.time()


_LEVEL = {"warning": "warn", "error": "error"}


class NotificationManager:
    """Every notice goes to the plugin's log; the manager keeps the ones sent
    by this process (get_notifications)."""

    def __init__(self) -> None:
        self.notifications: List[NotificationItem] = []

    @staticmethod
    def send_notification(type: Any = NotificationType.INFO, priority: Any = NotificationPriority.NORMAL,
                          message: str = "", title: str = "", detail: str = "", display_time: int = 3,
                          group: str = "", id: str = "") -> NotificationItem:
        item = NotificationItem(type, priority, message, title, detail, display_time, group, id)
        t = type.value if isinstance(type, NotificationType) else str(type)
        text = f"{title}: {message}" if title else message
        _runtime.log(_LEVEL.get(t, "info"), f"notification ({t}): {text}" + (f" ({detail})" if detail else ""))
        _manager().notifications.append(item)
        return item

    def get_notifications(self, after: Optional[float] = None) -> List[NotificationItem]:
        return [n for n in self.notifications if after is None or n.timestamp > after]


_managers: List[NotificationManager] = []


def _manager() -> NotificationManager:
    if not _managers:
        _managers.append(NotificationManager())
    return _managers[0]


__all__ = ["NotificationType", "NotificationPriority", "NotificationItem", "NotificationManager"]
