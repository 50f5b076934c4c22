"""Agent Zero's plugins._memory.helpers.memory: Memory, on Exocortex's memory
store. Each method runs one of the memory tools through the host's UseMemory
service (Call.use_memory), in the plugin that serves them (memory-tools), with
the context of the ported file's last call:

  search_similarity_threshold(query, limit, threshold, filter)  memory_load
  insert_text(text, metadata) (area, key, tags of metadata)     memory_save
  delete_documents_by_query(query, threshold, filter)            memory_load, then memory_forget
  delete_documents_by_ids(ids)                                   memory_delete, by the key and
                                                                 area the id was saved or found with

Filters are Agent Zero's expressions (area == 'main' or area == 'fragments'),
which the store's filter language reads as they are. Documents have
page_content and metadata (id, area, key, tags, timestamp), as LangChain's."""

from __future__ import annotations

import hashlib
import os
import re
from enum import Enum
from typing import Any, Dict, List, Optional, Tuple

from exocortex.a0 import _runtime

# Agent Zero's memory_load default similarity threshold.
DEFAULT_THRESHOLD = 0.7
# The memory directory of the ported plugin (Agent Zero's usr/memory/<subdir>).
MEMORY_DIR = "memory"

_RECORD = re.compile(r"\n\n(?=id: [^\n]*\narea: )")


class Document:
    """A memory as LangChain's Document: its text and metadata."""

    def __init__(self, page_content: str = "", metadata: Optional[Dict[str, Any]] = None) -> None:
        self.page_content = page_content
        self.metadata = metadata or {}

    def __repr__(self) -> str:
        return f"Document(page_content={self.page_content!r}, metadata={self.metadata!r})"


def _parse(text: str) -> List[Document]:
    """The memories of a memory_load answer (id:, area:, key:, tags:, timestamp:
    lines, then Content:), none for its "No memories found" answer."""
    if not text.startswith("id: "):
        return []
    docs = []
    for rec in _RECORD.split(text):
        head, _, content = rec.partition("\nContent: ")
        meta: Dict[str, Any] = {}
        for line in head.splitlines():
            k, _, v = line.partition(": ")
            meta[k.strip()] = [t.strip() for t in v.split(",")] if k == "tags" else v
        docs.append(Document(content, meta))
    return docs


class Memory:
    class Area(Enum):
        MAIN = "main"
        FRAGMENTS = "fragments"
        SOLUTIONS = "solutions"

    def __init__(self, agent: Any, memory_subdir: str = "default") -> None:
        self.agent = agent
        self.memory_subdir = memory_subdir
        # Where each id this process saved or found lives: id -> (key, area).
        self._where: Dict[str, Tuple[str, str]] = {}

    @staticmethod
    async def get(agent: Any) -> "Memory":
        return Memory(agent)

    def _use(self, tool: str, args: Dict[str, Any]) -> str:
        agent = self.agent if self.agent is not None else _runtime.current_agent.get()
        call = getattr(agent, "_call", None) or getattr(agent, "_last_call", None)
        if call is None:
            raise RuntimeError(f"a0compat: Memory used outside a call of the host ({tool}): "
                               "use it from an extension's execute (or a task it starts)")
        res = call.use_memory(tool, {k: v for k, v in args.items() if v not in (None, "")})
        if res.error:
            raise RuntimeError(f"a0compat: {tool}: {res.error}")
        return res.content

    async def search_similarity_threshold(self, query: str, limit: int = 10, threshold: float = DEFAULT_THRESHOLD,
                                          filter: str = "") -> List[Document]:
        docs = _parse(self._use("memory_load", {"query": query, "limit": int(limit),
                                                "threshold": float(threshold), "filter": filter}))
        for d in docs:
            if d.metadata.get("id") and d.metadata.get("key"):
                self._where[d.metadata["id"]] = (d.metadata["key"], d.metadata.get("area", "main"))
        return docs

    async def insert_text(self, text: str, metadata: Optional[Dict[str, Any]] = None) -> str:
        """Save text in the area metadata names (main by default), under
        metadata's key or one made from the text; returns that key, the id
        delete_documents_by_ids takes."""
        meta = dict(metadata or {})
        area = str(meta.get("area") or Memory.Area.MAIN.value)
        key = str(meta.get("key") or meta.get("id") or "a0-" + hashlib.sha256(text.encode()).hexdigest()[:16])
        tags = meta.get("tags")
        self._use("memory_save", {"key": key, "value": text, "area": area,
                                  "tags": list(tags) if isinstance(tags, (list, tuple)) else None})
        self._where[key] = (key, area)
        return key

    async def insert_documents(self, docs: List[Document]) -> List[str]:
        return [await self.insert_text(d.page_content, d.metadata) for d in docs]

    async def delete_documents_by_query(self, query: str, threshold: float = 0.75, filter: str = "") -> List[Document]:
        found = await self.search_similarity_threshold(query, limit=1000, threshold=threshold, filter=filter)
        out = self._use("memory_forget", {"query": query, "threshold": float(threshold), "filter": filter})
        m = re.match(r"(\d+) memor", out)
        n = int(m.group(1)) if m else 0
        return found[:n]

    async def delete_documents_by_ids(self, ids: List[str]) -> List[Document]:
        gone = []
        for i in ids:
            where = self._where.get(i)
            if where is None:
                raise ValueError(
                    f"a0compat: memory id {i!r} was not saved or found through this Memory: Exocortex's "
                    "memory tools delete by key (memory_delete) or by query (delete_documents_by_query)")
            key, area = where
            self._use("memory_delete", {"key": key, "area": area})
            self._where.pop(i, None)
            gone.append(Document("", {"id": i, "key": key, "area": area}))
        return gone

    @staticmethod
    def format_docs_plain(docs: List[Document]) -> List[str]:
        out = []
        for d in docs:
            lines = [f"{k}: {', '.join(v) if isinstance(v, list) else v}" for k, v in d.metadata.items()]
            out.append("\n".join(lines + [f"Content: {d.page_content}"]))
        return out


def reload() -> None:
    """Agent Zero's reload: drops the open memory databases so the next use opens
    them again (after an embedding model change). Here the store is the host's,
    which reopens a store built with another model itself, and Memory.get opens
    nothing in the plugin: there is nothing to drop."""


def get_memory_subdir_abs(agent: Any = None) -> str:
    """The ported plugin's memory/ directory (Agent Zero's usr/memory/<subdir>):
    files an extension keeps beside its memory, e.g. behavior.md, live there."""
    return os.path.join(_runtime.get().plugin_dir, MEMORY_DIR)


def abs_db_dir(memory_subdir: str = "default") -> str:
    return get_memory_subdir_abs()
