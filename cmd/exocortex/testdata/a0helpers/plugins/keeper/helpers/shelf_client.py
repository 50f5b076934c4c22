# Fixture written for Exocortex's tests: a plugin's own module importing a
# third-party package that is not installed.
import not_installed_shelf_sdk_xyz  # noqa: F401


def connect():
    return not_installed_shelf_sdk_xyz.connect()
