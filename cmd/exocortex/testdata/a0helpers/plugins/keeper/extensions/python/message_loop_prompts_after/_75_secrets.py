# Fixture written for Exocortex's tests: helpers.secrets masks the secret values
# in what the model is shown (the environment's and the plugin's secrets.env).
from helpers.extension import Extension
from helpers.secrets import get_secrets_manager
from agent import LoopData


class SecretsNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        mgr = get_secrets_manager(self.agent.context)
        said = loop_data.user_message.output_text() if loop_data.user_message else ""
        stream = mgr.create_streaming_filter()
        shown = stream.process_chunk(said[:20]) + stream.process_chunk(said[20:]) + stream.finalize()
        loop_data.extras_temporary["keeper_secrets"] = (
            f"A0-MARKER-secrets masked={mgr.mask_values(said)} streamed={shown} keys={mgr.get_keys()} {mgr!r}"
        )
