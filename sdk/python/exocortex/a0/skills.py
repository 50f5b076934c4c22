"""Agent Zero's helpers.skills: skills as folders holding a SKILL.md (YAML
front matter: name, description, version, tags, ...; then the skill's text),
found under the skill roots of the agent (subagents.get_paths(agent,
"skills"): the ported plugin's skills/ and the project's).

Agent Zero's model loads a skill with its skills_tool, which Exocortex does not
have: the port reports the tool as having no counterpart. A skill listed in a
prompt can be read with the host's file tools at the path load_skill_for_agent
names."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from exocortex.a0 import subagents

SKILL_FILE = "SKILL.md"
_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.S)


@dataclass
class Skill:
    name: str
    description: str
    path: Path
    skill_md_path: Path
    version: str = ""
    author: str = ""
    license: str = ""
    compatibility: str = ""
    tags: List[str] = field(default_factory=list)
    allowed_tools: List[str] = field(default_factory=list)
    triggers: List[str] = field(default_factory=list)
    content: str = ""
    raw_frontmatter: Dict[str, Any] = field(default_factory=dict)


def get_skill_roots(agent: Any = None) -> List[str]:
    return subagents.get_paths(agent, "skills")


def discover_skill_md_files(root: Path) -> List[Path]:
    """The SKILL.md files below root, hidden folders left out, in path order."""
    out: List[Path] = []
    if not root.is_dir():
        return out
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        if SKILL_FILE in names:
            out.append(Path(d) / SKILL_FILE)
    return out


def _list(v: Any) -> List[str]:
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [str(x).strip() for x in v if str(x).strip()]
    return [s.strip() for s in str(v).split(",") if s.strip()]


def split_frontmatter(markdown: str) -> Tuple[Dict[str, Any], str, List[str]]:
    """(front matter, body, problems) of a SKILL.md."""
    m = _FRONT.match(markdown)
    if not m:
        return {}, markdown, ["no front matter"]
    text, body = m.group(1), markdown[m.end():]
    try:
        import yaml  # Debian's python3-yaml where installed; a line reader otherwise
        data = yaml.safe_load(text)
        if isinstance(data, dict):
            return data, body, []
        return {}, body, ["front matter is not a mapping"]
    except ImportError:
        pass
    except Exception as e:  # yaml.YAMLError: fall back to the line reader
        problems = [f"front matter: {e}"]
    else:
        problems = []
    data: Dict[str, Any] = {}
    for line in text.splitlines():
        k, sep, v = line.partition(":")
        if sep and k.strip() and not line.startswith((" ", "\t", "-")):
            data[k.strip()] = v.strip().strip("'\"")
    return data, body, problems


def skill_from_markdown(skill_md: Path, include_content: bool = False) -> Optional[Skill]:
    try:
        text = skill_md.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    fm, body, _ = split_frontmatter(text)
    name = str(fm.get("name") or skill_md.parent.name).strip()
    return Skill(name=name, description=str(fm.get("description") or "").strip(), path=skill_md.parent,
                 skill_md_path=skill_md, version=str(fm.get("version") or ""), author=str(fm.get("author") or ""),
                 license=str(fm.get("license") or ""), compatibility=str(fm.get("compatibility") or ""),
                 tags=_list(fm.get("tags")), allowed_tools=_list(fm.get("allowed_tools") or fm.get("allowed-tools")),
                 triggers=_list(fm.get("triggers")), content=body if include_content else "", raw_frontmatter=fm)


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def list_skills(agent: Any = None, include_content: bool = False) -> List[Skill]:
    """The skills of the agent's roots; a name found twice: the first root's."""
    out: Dict[str, Skill] = {}
    for root in get_skill_roots(agent):
        for md in discover_skill_md_files(Path(root)):
            s = skill_from_markdown(md, include_content=include_content)
            if s and _key(s.name) not in out:
                out[_key(s.name)] = s
    return list(out.values())


def find_skill(skill_name: str, agent: Any = None, include_content: bool = False) -> Optional[Skill]:
    want = _key(skill_name)
    for s in list_skills(agent, include_content=include_content):
        if _key(s.name) == want or _key(s.path.name) == want:
            return s
    return None


def search_skills(query: str, limit: int = 10, agent: Any = None) -> List[Skill]:
    """The skills whose name, description or tags hold every word of query."""
    words = [w for w in query.lower().split() if w]
    hits = [s for s in list_skills(agent) if all(w in f"{s.name} {s.description} {' '.join(s.tags)}".lower() for w in words)]
    return hits[:limit]


def load_skill_for_agent(skill_name: str, agent: Any = None) -> str:
    """The skill as a text for the model's context: its name, path, metadata,
    description, body and the other files of its folder."""
    s = find_skill(skill_name, agent=agent, include_content=True)
    if not s:
        return f"Error: skill '{skill_name}' not found"
    lines = [f"Skill: {s.name}", f"Path: {s.path}"]
    for label, v in (("Version", s.version), ("Author", s.author), ("License", s.license),
                     ("Compatibility", s.compatibility), ("Tags", ", ".join(s.tags)),
                     ("Allowed tools", ", ".join(s.allowed_tools)), ("Triggers", ", ".join(s.triggers))):
        if v:
            lines.append(f"{label}: {v}")
    if s.description:
        lines += ["", "Description:", s.description]
    lines += ["", "Content (SKILL.md body):", s.content.strip() or "(empty)", ""]
    others = sorted(str(p.relative_to(s.path)) for p in s.path.rglob("*") if p.is_file() and p != s.skill_md_path)
    lines += (["Files (read them with the file tools):"] + others) if others else ["No additional files found."]
    return "\n".join(lines)


def delete_skill(skill_path: str) -> None:
    raise subagents.NoCounterpart(
        "a0compat: helpers.skills.delete_skill: a ported plugin does not delete skills; remove the folder by hand")


__all__ = ["Skill", "SKILL_FILE", "get_skill_roots", "discover_skill_md_files", "split_frontmatter",
           "skill_from_markdown", "list_skills", "find_skill", "search_skills", "load_skill_for_agent", "delete_skill"]
