# Fixture written for Exocortex's tests: calls with no counterpart in
# Exocortex raise an error naming the call (and the port report names each line).
from helpers.extension import Extension
from helpers import persist_chat, subagents
from helpers.settings import set_settings
from plugins._model_config.helpers import model_config
from agent import LoopData


class NoCounterpartNote(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        out = []
        for name, fn in (
            ("remove_chat", lambda: persist_chat.remove_chat("keeper")),
            ("get_agents_list", lambda: subagents.get_agents_list()),
            ("set_settings", lambda: set_settings({"chat_model_name": "x"})),
            ("build_chat_model", lambda: model_config.build_chat_model(self.agent)),
        ):
            try:
                fn()
                out.append(f"{name}=ran")
            except Exception as e:
                out.append(f"{name}={'named' if name in str(e) else 'unnamed'}")
        loop_data.extras_temporary["keeper_no_counterpart"] = "A0-MARKER-no-counterpart " + " ".join(out)
