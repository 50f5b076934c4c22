from helpers.extension import Extension


class StartupMigration(Extension):
    """Counts its calls at startup_migration in agent data."""

    def execute(self, **kwargs):
        n = (self.agent.get_data("startup_migration_calls") or 0) + 1
        self.agent.set_data("startup_migration_calls", n)
