"""Agent Zero's helpers.update_check: asks Agent Zero's update server whether a
newer version is out. A ported plugin is not Agent Zero: there is no Agent Zero
installation here to update, and the plugin contacts no server, so the answer is
always "nothing new" (a dict with no notification), as Agent Zero's own check
reads when its server has nothing to say."""

from __future__ import annotations

from typing import Any, Dict


async def check_version() -> Dict[str, Any]:
    """Nothing to update: no "notification" key, so no notice is sent."""
    return {}


__all__ = ["check_version"]
