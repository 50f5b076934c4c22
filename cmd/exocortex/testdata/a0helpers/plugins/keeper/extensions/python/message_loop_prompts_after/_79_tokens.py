# Fixture written for Exocortex's tests: helpers.tokens counts as the host's
# context budget does.
from helpers.extension import Extension
from helpers import tokens
from agent import LoopData

TEXT = "The keeper counts the shelves twice before closing. " * 6


class TokensNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        n = tokens.count_tokens(TEXT)
        trimmed = tokens.trim_to_tokens(TEXT, 10, "start")
        loop_data.extras_temporary["keeper_tokens"] = (
            f"A0-MARKER-tokens iteration={loop_data.iteration} bytes={len(TEXT.encode())} n={n} "
            f"approx={tokens.approximate_tokens(TEXT)} trimmed_fits={tokens.count_tokens(trimmed) <= 10} "
            f"trimmed_end={trimmed.endswith('...')}"
        )
