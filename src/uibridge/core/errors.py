"""Errors a client's input can cause: the server answers each with a 4xx, never a 500."""

from __future__ import annotations

__all__ = ['InputError']

_MAX_MESSAGE = 300


class InputError(ValueError):
    """A request body, or a message in it, that uibridge cannot take.

    `message` is short and never echoes a large input; `path` is where in the JSON body the problem is
    (`messages.3.parts.1`), empty when it is the body as a whole.
    """

    def __init__(self, message: str, path: str = '') -> None:
        if len(message) > _MAX_MESSAGE:
            message = message[: _MAX_MESSAGE - 1] + '…'
        super().__init__(f'{path}: {message}' if path else message)
        self.message = message
        self.path = path

    def at(self, *prefix: str | int) -> InputError:
        """The same error, located inside `prefix` (for errors raised by a helper that saw only a part)."""
        location = '.'.join(str(p) for p in prefix)
        return InputError(self.message, f'{location}.{self.path}' if self.path else location)
