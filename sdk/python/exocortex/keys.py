"""Typed shared-state keys.

A Key binds a name to one protobuf message class. The built-in keys are declared
once, in state.proto, as the (exocortex.v1.state_key) option on their message;
Key(FailureTracker) reads it. A plugin's own key names itself:

    tracker = Key(state_pb2.FailureTracker)          # "failure_tracker", session scope
    note = Key(wrappers_pb2.StringValue, name="my_note",
               scope=SCOPE_MONOLOGUE, doc="What my extension noted.")

During a call, key.get(call) returns the value the host sent (overlaid by the call's
own changes), key.set(call, value) records a new value and key.reset(call) clears it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Type

from google.protobuf import any_pb2
from google.protobuf.message import Message

from exocortex.v1 import manifest_pb2, state_pb2

if TYPE_CHECKING:  # pragma: no cover
    from exocortex.call import Call

_TYPE_URL_PREFIX = "type.googleapis.com/"


def _state_key_option(descriptor) -> Optional[state_pb2.StateKey]:
    """Return the (exocortex.v1.state_key) option of a message, if it has one."""
    opts = descriptor.GetOptions()
    if not opts.HasExtension(state_pb2.state_key):
        return None
    sk = opts.Extensions[state_pb2.state_key]
    return sk if sk.name else None


class Key:
    """A typed shared-state key: a name bound to one protobuf message class.

    Key(MessageClass) is the built-in key declared on that message in state.proto
    (ValueError when the message declares none). Key(MessageClass, name=..., scope=...,
    doc=..., flag=...) declares a plugin's own key of any message class; serve()
    refuses a plugin key whose name is a built-in key's or that has no scope.

    Keys are immutable values; list them in a Spec's reads, writes and resets.
    """

    __slots__ = ("_type", "_name", "_scope", "_owner", "_doc", "_flag", "_builtin")

    def __init__(
        self,
        message_type: Type[Message],
        name: Optional[str] = None,
        scope: int = manifest_pb2.SCOPE_UNSPECIFIED,
        doc: str = "",
        flag: bool = False,
    ) -> None:
        if not (isinstance(message_type, type) and issubclass(message_type, Message)):
            raise TypeError(
                f"exocortex.Key: {message_type!r} is not a generated protobuf message class "
                "such as exocortex.v1.state_pb2.FailureTracker")
        desc = message_type.DESCRIPTOR
        object.__setattr__(self, "_type", message_type)
        if name is None:
            sk = _state_key_option(desc)
            if sk is None:
                raise ValueError(
                    f"exocortex.Key: message {desc.full_name} declares no (exocortex.v1.state_key) option, "
                    f"so it is not a built-in state key; declare a plugin key with "
                    f"Key({desc.name}, name=..., scope=...)")
            values = (sk.name, sk.scope, sk.owner, sk.doc, sk.flag, True)
        else:
            values = (name, scope, "", doc, bool(flag), False)
        for slot, v in zip(("_name", "_scope", "_owner", "_doc", "_flag", "_builtin"), values):
            object.__setattr__(self, slot, v)

    def __setattr__(self, name, value):
        raise AttributeError("exocortex.Key is immutable")

    @property
    def name(self) -> str:
        """The key's name, e.g. "failure_tracker"."""
        return self._name

    @property
    def message_type(self) -> Type[Message]:
        """The message class of the key's values."""
        return self._type

    @property
    def type_name(self) -> str:
        """The full protobuf name of the key's type, e.g. "exocortex.v1.FailureTracker"."""
        return self._type.DESCRIPTOR.full_name

    @property
    def scope(self) -> int:
        """When the host resets the key (manifest_pb2.SCOPE_*)."""
        return self._scope

    @property
    def builtin(self) -> bool:
        """Whether the key is declared in state.proto rather than by the plugin."""
        return self._builtin

    @property
    def flag(self) -> bool:
        return self._flag

    def as_flag(self) -> "Key":
        """Return a copy of a plugin key marked as a flag (one extension sets it,
        another must reset it). A built-in key is returned unchanged: state.proto
        decides whether it is a flag."""
        if self._builtin:
            return self
        return Key(self._type, name=self._name, scope=self._scope, doc=self._doc, flag=True)

    def spec(self) -> manifest_pb2.StateKeySpec:
        """The key's declaration as the manifest carries it (a new message each call).
        The owner of a plugin key is filled in by the manifest: the first extension,
        by name, that writes it."""
        return manifest_pb2.StateKeySpec(
            name=self._name, type=self.type_name, scope=self._scope,
            owner=self._owner, doc=self._doc, flag=self._flag)

    def _same(self, other: "Key") -> bool:
        return (self._name, self.type_name, self._scope, self._doc, self._flag) == (
            other._name, other.type_name, other._scope, other._doc, other._flag)

    def __repr__(self) -> str:
        return f"{self._name} ({self.type_name})"

    # --- access during a call -------------------------------------------------

    def get(self, call: "Call") -> Optional[Message]:
        """Return the key's value as the host sent it with this call, overlaid by
        this call's own set() and reset(); None when the key has no value.

        The key must be in the extension's Spec.reads; otherwise get() returns None
        and the call fails with FAILED_PRECONDITION naming the extension and the key
        (the host enforces the same rule)."""
        if not call._check(self, write=False):
            return None
        a = call._value(self._name)
        if a is None:
            return None
        msg = self._type()
        if a.type_url != _TYPE_URL_PREFIX + self.type_name or not a.Unpack(msg):
            call._fail(
                f"{call._who()}: state key {_q(self._name)}: value of type {_q(a.type_url)} "
                f"does not decode as {self.type_name}")
            return None
        return msg

    def set(self, call: "Call", value: Message) -> None:
        """Record a new value for the key; the SDK sends it in the response's changes.
        The value is encoded at once: changing it afterwards changes nothing. The key
        must be in the extension's Spec.writes and the value of the key's type, not
        None (use reset() to clear a key); otherwise the call fails with
        FAILED_PRECONDITION naming extension and key."""
        if not call._check(self, write=True):
            return
        if value is None:
            call._fail(f"{call._who()}: state key {_q(self._name)}: set with a nil value (None); "
                       "use reset() to clear a key")
            return
        if not isinstance(value, self._type):
            call._fail(f"{call._who()}: state key {_q(self._name)} holds {self.type_name}, "
                       f"not {type(value).__module__}.{type(value).__name__}")
            return
        a = any_pb2.Any()
        a.Pack(value)
        call._record(self._name, a)

    def reset(self, call: "Call") -> None:
        """Record that the key is cleared. The key must be in the extension's
        Spec.writes (and, for the wiring lint, should be in Spec.resets)."""
        if not call._check(self, write=True):
            return
        call._record(self._name, None)


def builtin_keys() -> List[manifest_pb2.StateKeySpec]:
    """The declarations of every built-in key of state.proto, sorted by name: the
    registry the host starts from."""
    out = []
    for desc in state_pb2.DESCRIPTOR.message_types_by_name.values():
        sk = _state_key_option(desc)
        if sk is None:
            continue
        out.append(manifest_pb2.StateKeySpec(
            name=sk.name, type=desc.full_name, scope=sk.scope,
            owner=sk.owner, doc=sk.doc, flag=sk.flag))
    out.sort(key=lambda s: s.name)
    return out


def _q(s: str) -> str:
    """Quote like Go's %q for the common case, so errors read the same from both SDKs."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
