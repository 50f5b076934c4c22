# Fixture written for Exocortex's tests: helpers.strings (§§include of a file,
# truncation), helpers.tool's Response and helpers.guids.
from helpers.extension import Extension
from helpers import files, guids
from helpers.strings import replace_file_includes, truncate_text_by_ratio
from helpers.tool import Response
from agent import LoopData


class StringsNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        files.write_file("include_me.txt", "INCLUDED-TEXT")
        text = replace_file_includes("before §§include(include_me.txt) and §§include(missing.txt)")
        r = Response(message="done", break_loop=False)
        loop_data.extras_temporary["keeper_strings"] = (
            f"A0-MARKER-strings text={text} cut={truncate_text_by_ratio('abcdefghij', 7, '..', 0.5)} "
            f"response={r.message}/{r.break_loop} id={len(guids.generate_id(12))}"
        )
