"""The helper's version (kept out of the package __init__, which stays empty)."""

__version__ = "0.1.0"
