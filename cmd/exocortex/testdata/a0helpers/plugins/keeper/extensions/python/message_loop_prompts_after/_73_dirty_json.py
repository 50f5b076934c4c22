# Fixture written for Exocortex's tests: helpers.dirty_json on a reply the way
# models write them (a fence, single quotes, an unquoted key, a trailing comma).
from helpers.extension import Extension
from helpers.dirty_json import DirtyJson
from helpers import dirty_json
from agent import LoopData


class DirtyJsonNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        reply = "Sure:\n```json\n{fact: 'lenient', ids: [3, 1,], ok: True,}\n```"
        parsed = DirtyJson.parse_string(reply)
        ids = dirty_json.try_parse("[2, 4")
        loop_data.extras_temporary["keeper_json"] = (
            f"A0-MARKER-dirty-json fact={parsed['fact']} ids={parsed['ids']} ok={parsed['ok']} cut={ids}"
        )
