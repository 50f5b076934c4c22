# Fixture written for Exocortex's tests (not Agent Zero's code): a plain
# `def execute`, which Agent Zero accepts as well as an async one.
from agent import LoopData
from helpers.extension import Extension


class PlainDef(Extension):
    def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        self.agent.set_data("plain_def_ran", True)
