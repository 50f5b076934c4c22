from helpers.extension import Extension
from helpers import cache


class Migrate(Extension):
    def execute(self, **kwargs):
        # once per process: what a later hook finds in the process's cache
        runs = cache.get("fixture_startup", "runs", 0)
        cache.add("fixture_startup", "runs", runs + 1)
