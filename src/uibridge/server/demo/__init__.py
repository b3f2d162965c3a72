"""The demo: a deterministic agent that needs no model and no API key, and the page that talks to it."""

from .agent import KEYWORDS, DemoAgent

__all__ = ['KEYWORDS', 'DemoAgent']
