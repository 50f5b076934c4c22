"""Hook requests are read-only: the SDK's copy of what the host sent, whose changes
the host never sees. Agent Zero's extensions change the loop's data in place, so a
port naturally writes `req.result.content += note` and returns None, which does
nothing. The SDK keeps a copy of every request as received and compares it with the
request after the handler returned; a difference fails the call with an error that
names the field and the response field that does the job. The advice comes from the
protocol: the changed_by and change_elsewhere options on the request's fields
(hooks.proto). The Go SDK words the same error from the same options."""

from __future__ import annotations

from typing import Optional, Tuple

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from exocortex.v1 import hooks_pb2


def _is_map(fd: FieldDescriptor) -> bool:
    return fd.message_type is not None and fd.message_type.GetOptions().map_entry


def _has(m: Message, fd: FieldDescriptor) -> bool:
    """Whether fd is set in m, for a singular field (proto3 scalars without
    presence count as set when not zero)."""
    try:
        return m.HasField(fd.name)
    except ValueError:
        return getattr(m, fd.name) != fd.default_value


def diff(a: Message, b: Message) -> Tuple[str, Optional[FieldDescriptor]]:
    """The path of the first field in which a and b, messages of one type, differ
    ("result.content", "history[2]") and a's top-level field it is in; ("", None)
    when none does."""
    for fd in a.DESCRIPTOR.fields:
        va, vb = getattr(a, fd.name), getattr(b, fd.name)
        repeated = fd.label == FieldDescriptor.LABEL_REPEATED
        if repeated:
            if va == vb:
                continue
            if _is_map(fd) or fd.message_type is None or len(va) != len(vb):
                return fd.name, fd
            for j, (x, y) in enumerate(zip(va, vb)):
                sub, _ = diff(x, y)
                if sub:
                    return f"{fd.name}[{j}].{sub}", fd
            return fd.name, fd
        ha, hb = _has(a, fd), _has(b, fd)
        if ha == hb and va == vb:
            continue
        if fd.message_type is not None and ha and hb:
            sub, _ = diff(va, vb)
            return (f"{fd.name}.{sub}" if sub else fd.name), fd
        return fd.name, fd
    return "", None


def request_change(before: Message, after: Message) -> Tuple[str, Optional[FieldDescriptor]]:
    """How a handler changed its request: the path of the first changed field and
    its top-level field, or ("", None) when it did not."""
    if before == after:
        return "", None
    path, top = diff(before, after)
    return (path or "(unknown fields)"), top


def advice(hook_name: str, top: Optional[FieldDescriptor]) -> str:
    """How a change to top is made instead: the response fields its changed_by
    option names, its change_elsewhere option, or that nothing at this hook can
    change it."""
    if top is None:
        return "Return what you mean to change in the response instead."
    if top.name == "call":
        return "State changes go through the Call (Key.set, Key.reset); the context is read-only."
    opts = top.GetOptions()
    resp = top.containing_type.name.removesuffix("Request") + "Response"
    by = list(opts.Extensions[hooks_pb2.changed_by])
    if by:
        return f"Return the change in {resp}." + f" or {resp}.".join(by) + " instead."
    where = opts.Extensions[hooks_pb2.change_elsewhere]
    if where:
        return f"No field of {resp} changes {top.name}: {where}."
    return (f"No field of {resp} changes {top.name}: it is information about this point of the loop, "
            f"not something {hook_name} can change.")


def mutation_error(plugin: str, extension: str, hook_name: str, path: str, top: Optional[FieldDescriptor]) -> str:
    """The error for a handler that changed field path of its request at hook."""
    return (f'plugin "{plugin}": extension "{extension}" at {hook_name} changed its request\'s {path}, '
            f"which changes nothing: the request is a read-only copy of what the host sent. "
            f"{advice(hook_name, top)}")
