#!/usr/bin/python3
"""pynotebook is examples/notebook written with the Python SDK: notes kept in
Exocortex's long-term memory through the host (Call.memory()).

The manifest declares uses_memory and the one area it writes, "notes"; the host
refuses a write to any other area, naming the plugin, the area and
memory_write_areas.

  note_add {text, tags?, area?}  saves a note: "Noted as ID in area AREA."
  note_find {query, limit?}      one line per hit, best first: "ID: TEXT (why: ...)"
"""

import exocortex as exo

AREA = "notes"


def note_add(call, args):
    text = (args.get("text") or "").strip()
    if not text:
        raise exo.ToolError('note_add: "text" is empty: write the note')
    try:
        recs = call.memory("tool:note_add").save({"area": args.get("area") or AREA, "text": text,
                                                   "tags": args.get("tags") or []})
    except RuntimeError as e:
        raise exo.ToolError(f"note_add: {e}") from None
    return f"Noted as {recs[0].id} in area {recs[0].area}."


def note_find(call, args):
    query = args.get("query") or ""
    try:
        res = call.memory().search(query, limit=int(args.get("limit") or 5), areas=[AREA])
    except RuntimeError as e:
        raise exo.ToolError(f"note_find: {e}") from None
    if not res.hits:
        return f"No note matches {query!r}."
    return "\n".join(f"{h.record.id}: {h.record.text} (why: {h.why})" for h in res.hits)


PLUGIN = exo.Plugin(
    "pynotebook", version="1.0.0", uses_memory=True, memory_write_areas=[AREA],
    tools=[
        exo.Tool("note_add", "Keep a note in long-term memory (area notes).",
                 parameters={"type": "object", "properties": {"text": {"type": "string"}, "area": {"type": "string"},
                                                              "tags": {"type": "array", "items": {"type": "string"}}},
                             "required": ["text"]}, run=note_add),
        exo.Tool("note_find", "Search the notes kept with note_add; says why each matched.",
                 parameters={"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                             "required": ["query"]}, run=note_find),
    ])

if __name__ == "__main__":
    exo.serve(PLUGIN)
