# Fixture written for Exocortex's tests: a plugin's own module importing
# another that cannot load (so this one cannot either).
from plugins.keeper.helpers import shelf_client


def handle():
    return shelf_client.connect()
