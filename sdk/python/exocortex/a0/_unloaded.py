"""A ported file at a gate hook (tool_execute_before, text_editor_write_before,
text_editor_patch_before: a hook whose response can stop the action) that could
not load: an import error, a syntax error, a crash while its module ran. Agent
Zero would fail on it at every call; here it is served all the same, under its
own name and order, and raises the load error at every call, so the host stops
the action it guards (guards fail closed, core/loop) and tells the model and the
operator why. A file at any other hook is left out instead, as its failure
stops nothing."""

from __future__ import annotations

import os
from typing import Any

from exocortex.hooks import lookup
from exocortex.spec import Spec


def gates(hook: str) -> bool:
    """Whether the hook's response can stop the action: a field block or refuse."""
    fields = lookup(hook).response.DESCRIPTOR.fields_by_name
    return "block" in fields or "refuse" in fields


class GuardNotLoaded(RuntimeError):
    """Raised at every call of a guard whose file did not load."""


class UnloadedGuard:
    """The extension of a guard file that did not load (see the module)."""

    uses_files = uses_utility = uses_memory = False

    def __init__(self, path: str, hook: str, order: int, ext_name: str, reason: str) -> None:
        self.path, self.hook, self.order, self.ext_name, self.reason = path, hook, order, ext_name, reason
        self.name = ext_name
        self.info = lookup(hook)
        setattr(self, hook, self._handle)

    def spec(self) -> Spec:
        return Spec(name=self.ext_name, order=self.order,
                    description=f"Agent Zero guard {os.path.basename(self.path)}, ported; it did not load "
                                f"({self.reason}), so it stops every action it guards")

    def _handle(self, call: Any, req: Any) -> Any:
        raise GuardNotLoaded(
            f"a0compat: {os.path.basename(self.path)} did not load ({self.reason}): a guard that cannot run has "
            "allowed nothing; install what it needs (the porting report names it) or remove the file from the plugin")
