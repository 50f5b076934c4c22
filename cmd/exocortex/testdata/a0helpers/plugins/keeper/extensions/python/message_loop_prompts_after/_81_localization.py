# Fixture written for Exocortex's tests: helpers.localization, the host's
# timezone and clock.
from datetime import datetime, timezone

from helpers.extension import Extension
from helpers.localization import Localization
from agent import LoopData


class LocalizationNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        loc = Localization.get()
        noon = loc.utc_dt_to_localtime_str(datetime(2026, 1, 15, 12, 0, tzinfo=timezone.utc), sep=" ", timespec="minutes")
        back = loc.localtime_str_to_utc_dt("2026-07-15 14:30")
        drift = abs((loc.now() - datetime.now(timezone.utc)).total_seconds())
        loop_data.extras_temporary["keeper_localization"] = (
            f"A0-MARKER-localization tz={loc.get_timezone()} noon_utc={noon} "
            f"summer_local_1430_utc={back.strftime('%H:%M')} clock_ok={drift < 60}"
        )
