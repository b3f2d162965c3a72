"""One package per chat protocol, each with the same faces: `dump_messages` / `load_messages` (history), a stream
encoder (neutral events to the protocol's wire), a stream decoder (the way back) and request parsing.

Import the protocol you serve: `from uibridge.adapters import vercel_ai` or `ag_ui`.
"""
