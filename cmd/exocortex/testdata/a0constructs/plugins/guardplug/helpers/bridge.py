# A client for a chat bridge the plugin forwards results to, written for
# Exocortex's tests: its SDK is not installed, so the module cannot load.
import not_installed_bridge_sdk_xyz


def send(text: str) -> None:
    not_installed_bridge_sdk_xyz.post(text)
