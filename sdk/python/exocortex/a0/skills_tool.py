"""The names of Agent Zero's tools.skills_tool that extensions read: the agent
data key holding the skills the model loaded with the tool (which Exocortex
does not have, so the key is only set by the tree's own files)."""

DATA_NAME_LOADED_SKILLS = "loaded_skills"

__all__ = ["DATA_NAME_LOADED_SKILLS"]
