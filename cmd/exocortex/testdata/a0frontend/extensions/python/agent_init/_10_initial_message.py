import json
from helpers.extension import Extension


class InitialMessage(Extension):
    def execute(self, **kwargs):
        if not self.agent or self.agent.number != 0:
            return
        msg = json.dumps({"thoughts": ["greet"], "headline": "greeting", "tool_name": "response",
                          "tool_args": {"text": "Hello from the fixture tree"}})
        said = self.agent.hist_add_ai_response(msg)
        self.agent.context.log.log(type="response", content=json.loads(said.content)["tool_args"]["text"])
