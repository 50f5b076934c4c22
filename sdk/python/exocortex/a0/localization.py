"""Agent Zero's helpers.localization: the operator's timezone and time
formatting, from the host's clock and zone.

Exocortex has no timezone setting: the zone is the one the host runs in, which
the plugin process inherits (TZ in the environment, else the system's
/etc/localtime), UTC when neither names an IANA zone. set_timezone changes it
for this plugin process only (Agent Zero saves it in its .env; nothing is saved
here: set TZ for the host to keep a zone)."""

from __future__ import annotations

import os
import threading
from datetime import datetime, timedelta, timezone as dt_timezone, tzinfo
from typing import Any, Optional
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from exocortex.a0 import _runtime

_LOCALTIME = "/etc/localtime"


def _zone(name: str) -> Optional[tzinfo]:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def host_timezone() -> str:
    """The IANA name of the zone the host runs in: TZ, else /etc/localtime's
    target under a zoneinfo directory, else UTC."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and _zone(tz) is not None:
        return tz
    try:
        target = os.path.realpath(_LOCALTIME)
    except OSError:
        target = ""
    if "/zoneinfo/" in target:
        name = target.split("/zoneinfo/", 1)[1]
        if _zone(name) is not None:
            return name
    return "UTC"


class Localization:
    _instance: Optional["Localization"] = None
    _lock = threading.Lock()

    @classmethod
    def get(cls, *args: Any, **kwargs: Any) -> "Localization":
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls(*args, **kwargs)
            return cls._instance

    def __init__(self, timezone: Optional[str] = None) -> None:
        self.timezone = host_timezone()
        if timezone is not None:
            self.set_timezone(timezone)

    def get_timezone(self) -> str:
        return self.timezone

    def get_tzinfo(self) -> tzinfo:
        return _zone(self.timezone) or dt_timezone.utc

    def get_offset_minutes(self) -> int:
        off = self.now().utcoffset() or timedelta(0)
        return int(off.total_seconds() // 60)

    def apply_process_timezone(self) -> None:
        """Agent Zero sets TZ for its process; the plugin keeps the host's (the
        zone is used through get_tzinfo)."""

    def now(self) -> datetime:
        return datetime.now(self.get_tzinfo())

    def now_iso(self, sep: str = "T", timespec: str = "auto") -> str:
        return self.now().isoformat(sep=sep, timespec=timespec)

    def localize_naive_datetime(self, dt: datetime) -> datetime:
        return dt if dt.tzinfo is not None else dt.replace(tzinfo=self.get_tzinfo())

    def set_timezone(self, timezone: str, persist: bool = True) -> None:
        """Use the IANA zone timezone in this plugin process (not saved: set TZ
        for the host to keep it). An unknown zone is logged and the zone kept."""
        if _zone(timezone) is None:
            _runtime.log("warn", f"a0compat: Localization.set_timezone({timezone!r}): not an IANA timezone; "
                                 f"keeping {self.timezone}")
            return
        self.timezone = timezone

    def localtime_str_to_utc_dt(self, localtime_str: Optional[str]) -> Optional[datetime]:
        if not localtime_str:
            return None
        s = localtime_str.strip().replace("Z", "+00:00")
        try:
            dt = datetime.fromisoformat(s)
        except ValueError:
            for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
                try:
                    dt = datetime.strptime(s.replace("T", " "), fmt)
                    break
                except ValueError:
                    continue
            else:
                _runtime.log("warn", f"a0compat: Localization: {localtime_str!r} is not a local time "
                                     "(ISO 8601 or YYYY-MM-DD HH:MM[:SS])")
                return None
        return self.localize_naive_datetime(dt).astimezone(dt_timezone.utc)

    def utc_dt_to_localtime_str(self, utc_dt: Optional[datetime], sep: str = "T",
                                timespec: str = "auto") -> Optional[str]:
        if utc_dt is None:
            return None
        if utc_dt.tzinfo is None:
            utc_dt = utc_dt.replace(tzinfo=dt_timezone.utc)
        return utc_dt.astimezone(self.get_tzinfo()).isoformat(sep=sep, timespec=timespec)

    def serialize_datetime(self, dt: Optional[datetime]) -> Optional[str]:
        if dt is None:
            return None
        return self.localize_naive_datetime(dt).astimezone(self.get_tzinfo()).isoformat()
