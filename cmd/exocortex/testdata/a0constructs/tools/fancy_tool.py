class FancyTool:
    """A tool of the tree with no Exocortex counterpart."""
