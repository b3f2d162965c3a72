"""The protocol-neutral core: the message model, the events, framing, retry feedback, signing and sanitizing.

No protocol and no I/O. Its public names are re-exported by `uibridge`, which is where to import them from; the
modules whose names make up that vocabulary (`messages`, `events`, `content`, `citations`, `usage`, `framing`,
`run`) list them in `__all__`, and the rest are the core's own workings.
"""
