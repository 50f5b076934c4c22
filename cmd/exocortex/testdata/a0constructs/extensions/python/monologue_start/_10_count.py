from helpers.extension import Extension


class Count(Extension):
    async def execute(self, **kwargs):
        self.agent.set_data("monologues", (self.agent.get_data("monologues") or 0) + 1)
        self.agent.context.log.log(type="info", content="counted")
        if not self.agent.context.log.logs:
            raise RuntimeError("the log keeps no items")
        self.agent.context.log.set_initial_progress()
