class SearchEngine:
    """A tool of the tree Exocortex has a counterpart of (web_search)."""
