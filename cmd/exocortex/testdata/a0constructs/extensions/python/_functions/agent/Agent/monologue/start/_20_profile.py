from helpers.extension import Extension


class Profile(Extension):
    def execute(self, data: dict = {}, **kwargs):
        self.agent.set_data("profile_seen", self.agent.config.profile or "default")
