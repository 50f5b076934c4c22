from helpers.extension import Extension
from helpers import cache, dotenv


class Welcome(Extension):
    async def execute(self, banners: list = [], frontend_context: dict = {}, **kwargs):
        note = dotenv.get_dotenv_value("FIXTURE_BANNER_NOTE", "no note")
        banners.append({
            "id": "fixture-welcome",
            "type": "info",
            "priority": 20,
            "title": "Fixture welcome",
            "html": f"<b>Migrated</b> {cache.get('fixture_startup', 'runs', 0)} time(s) &amp; served to "
                    f"{frontend_context.get('client', '?')}@{frontend_context.get('hostname', '?')}<br>{note}",
            "dismissible": True,
        })
        banners.append({"id": "fixture-low", "type": "warning", "priority": 5, "title": "Fixture low", "html": "last"})
