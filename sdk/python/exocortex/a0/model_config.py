"""Agent Zero's plugins._model_config.helpers.model_config, onto the models of
the Exocortex session.

Agent Zero keeps its models in presets of the _model_config plugin; Exocortex
has one chat model a session (the running call's, config.yaml's model or
--model), a utility model (utility_model) and an embedder
(tools.memory.embedder), which the host shows its plugins
(config.PluginSettings). Each get_*_config returns Agent Zero's dict for the
slot: provider, name, ctx_length. Exocortex has no separate vision model:
get_vision_model_config is {} and the chat model's "vision" is False.

Presets, per-chat overrides and model objects are not a plugin's here:
build_*_model and the preset functions raise NoCounterpart naming the call
(a ported file asks the host for a utility-model answer instead)."""

from __future__ import annotations

from typing import Any, Dict

from exocortex.a0 import _host

DEFAULT_PRESET_NAME = "Default"
MODEL_PRESET_CONFIG_KEY = "model_preset"


class NoCounterpart(RuntimeError):
    """An Agent Zero call with no counterpart in a ported plugin."""


def _needs_a_hand(call: str, what: str) -> NoCounterpart:
    return NoCounterpart(f"a0compat: plugins._model_config.helpers.model_config.{call} has no counterpart in a "
                         f"ported plugin: {what}")


def get_chat_model_config(agent: Any = None) -> Dict[str, Any]:
    s = _host.settings()
    return {"provider": str(s.get("provider") or ""), "name": _host.model(), "ctx_length": _host.num_ctx(),
            "vision": False}


def get_utility_model_config(agent: Any = None) -> Dict[str, Any]:
    s = _host.settings()
    name = str(s.get("utility_model") or "")
    return {"provider": str(s.get("provider") or ""), "name": name} if name else {}


def get_embedding_model_config(agent: Any = None) -> Dict[str, Any]:
    emb = str(_host.settings().get("embedder") or "")
    if not emb or emb == "none":
        return {}
    provider, sep, name = emb.partition(":")
    return {"provider": provider, "name": name} if sep else {"provider": "", "name": emb}


def get_vision_model_config(agent: Any = None) -> Dict[str, Any]:
    return {}


def get_effective_config(agent: Any = None) -> Dict[str, Any]:
    return {"chat_model": get_chat_model_config(agent), "utility_model": get_utility_model_config(agent),
            "embedding_model": get_embedding_model_config(agent), "vision_model": {},
            MODEL_PRESET_CONFIG_KEY: DEFAULT_PRESET_NAME}


def get_config(agent: Any = None, project_name: Any = None, agent_profile: Any = None) -> Dict[str, Any]:
    return get_effective_config(agent)


def get_effective_preset_name(agent: Any = None) -> str:
    return DEFAULT_PRESET_NAME


def is_chat_override_allowed(agent: Any = None) -> bool:
    return False


def is_chat_model_configured(config: Any = None) -> bool:
    return bool(get_chat_model_config().get("name"))


def _build(call: str) -> NoCounterpart:
    return _needs_a_hand(call, "the host makes the model calls; a ported file gets a utility-model answer from "
                               "the host, and sees the main model's calls at chat_model_call_before/after")


def build_chat_model(agent: Any = None) -> Any:
    raise _build("build_chat_model")


def build_utility_model(agent: Any = None) -> Any:
    raise _build("build_utility_model")


def build_vision_model(agent: Any = None) -> Any:
    raise _build("build_vision_model")


def build_embedding_model(agent: Any = None) -> Any:
    raise _build("build_embedding_model")


def _presets(call: str) -> NoCounterpart:
    return _needs_a_hand(call, "Exocortex has no model presets: the operator sets model, utility_model and "
                               "embed_model in config.yaml")


def get_presets() -> Any:
    raise _presets("get_presets")


def save_presets(presets: Any) -> None:
    raise _presets("save_presets")


def get_preset_by_name(name: str) -> Any:
    raise _presets(f"get_preset_by_name({name!r})")


# The providers whose models run where they are asked, with no key (Agent
# Zero's LOCAL_PROVIDERS), and the ones the host itself serves: the host's
# own clients (config.yaml provider: ollama, openai) read their keys from the
# host's configuration, which plugins never see, and the host reports a
# missing one at start (its model probe); so neither is missing a key here.
LOCAL_PROVIDERS = {"ollama", "lm_studio"}
# The host's model clients and embedders (tools.memory.embedder: auto, glove,
# ollama, openai).
HOST_PROVIDERS = {"ollama", "openai", "glove", "auto"}


def has_provider_api_key(provider: str, configured_api_key: str = "") -> bool:
    """Agent Zero's check: a key given, or API_KEY_<P>, <P>_API_KEY or
    <P>_API_TOKEN in the plugin's environment (helpers.dotenv)."""
    from exocortex.a0 import dotenv
    v = (configured_api_key or "").strip()
    if v and v != "None":
        return True
    p = provider.upper()
    for k in (f"API_KEY_{p}", f"{p}_API_KEY", f"{p}_API_TOKEN"):
        key = dotenv.get_dotenv_value(k)
        if key and key.strip() and key != "None":
            return True
    return False


def get_missing_api_key_providers(agent: Any = None) -> list:
    """The session's model slots whose provider needs a key that is not set:
    [{"model_type", "provider"}], as Agent Zero's (see HOST_PROVIDERS)."""
    out = []
    for label, cfg in (("Chat Model", get_chat_model_config(agent)), ("Utility Model", get_utility_model_config(agent)),
                       ("Embedding Model", get_embedding_model_config(agent))):
        provider = str(cfg.get("provider", "") or "")
        low = provider.lower()
        if not provider or low in LOCAL_PROVIDERS or low in HOST_PROVIDERS:
            continue
        if not has_provider_api_key(low, str(cfg.get("api_key", "") or "")):
            out.append({"model_type": label, "provider": provider})
    return out
