"""Agent Zero's helpers.cache: an in-process cache of values by area and key,
each entry stamped when last used, areas switched on and off, and
trim_cache dropping the entries unused for a number of seconds (its job_loop
file trims every area each minute). Agent Zero's cache lives in its one
process; this one in the ported plugin's process, shared by the tree's files
as theirs is. An area name with "*" matches areas by glob (fnmatch)."""

from __future__ import annotations

import fnmatch
import threading
import time
from typing import Any, Dict

_lock = threading.RLock()
_cache: Dict[str, Dict[Any, "CacheEntry"]] = {}
_enabled_global = [True]
_enabled_areas: Dict[str, bool] = {}


class CacheEntry:
    """A value and when it was last read or written (time.monotonic)."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.last_used = time.monotonic()


def toggle_global(enabled: bool) -> None:
    with _lock:
        _enabled_global[0] = bool(enabled)
        if not enabled:
            _cache.clear()


def toggle_area(area: str, enabled: bool) -> None:
    with _lock:
        _enabled_areas[area] = bool(enabled)
        if not enabled:
            clear(area)


def _is_enabled(area: str) -> bool:
    return _enabled_global[0] and _enabled_areas.get(area, True)


def _areas(area: str) -> list:
    if "*" in area or "?" in area:
        return [a for a in _cache if fnmatch.fnmatch(a, area)]
    return [area] if area in _cache else []


def has(area: str, key: Any) -> bool:
    with _lock:
        return _is_enabled(area) and key in _cache.get(area, {})


def add(area: str, key: Any, data: Any) -> None:
    with _lock:
        if _is_enabled(area):
            _cache.setdefault(area, {})[key] = CacheEntry(data)


def get(area: str, key: Any, default: Any = None) -> Any:
    with _lock:
        if not _is_enabled(area):
            return default
        e = _cache.get(area, {}).get(key)
        if e is None:
            return default
        e.last_used = time.monotonic()
        return e.value


def remove(area: str, key: Any) -> None:
    with _lock:
        _cache.get(area, {}).pop(key, None)


def clear(area: str) -> None:
    with _lock:
        for a in _areas(area):
            _cache.pop(a, None)


def trim_cache(area: str, seconds: float = 300) -> None:
    """Drops the entries of the matching areas unused for seconds or more."""
    cutoff = time.monotonic() - seconds
    with _lock:
        for a in _areas(area):
            entries = _cache[a]
            for k in [k for k, e in entries.items() if e.last_used <= cutoff]:
                del entries[k]


def clear_all() -> None:
    with _lock:
        _cache.clear()


def determine_cache_key(agent: Any, *additional: Any) -> str:
    """A key of the agent (its name) and the values given."""
    name = getattr(agent, "agent_name", "") or getattr(agent, "name", "") or ""
    return "|".join([str(name)] + [str(a) for a in additional])
