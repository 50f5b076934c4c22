from helpers.files import VariablesPlugin


class Workdir(VariablesPlugin):
    def get_variables(self, file, backup_dirs=None, **kwargs):
        return {"workdir": "/srv/work"}
