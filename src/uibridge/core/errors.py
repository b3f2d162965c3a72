"""uibridge's exceptions: `InputError`, what a client's input can cause (a server answers each with a 4xx, never
a 500), and `UserError`, a mistake in how an application calls uibridge (the message says what to change)."""

from __future__ import annotations

from collections.abc import Sequence

_MAX_MESSAGE = 300


class UserError(RuntimeError):
    """A mistake in how uibridge is called: the message says what to change."""


class InputError(ValueError):
    """A request body, or a message in it, that uibridge cannot take.

    `message` is short and never echoes a large input; `path` is where in the JSON body the problem is
    (`messages.3.parts.1`), empty when it is the body as a whole.

    A helper that saw only a part of the body reports where in that part the problem is; its caller re-roots
    the error with `at` (and, where it left items of a list out, gives them back the client's numbering with
    `renumbered`), so every path a client reads counts from the body it sent.
    """

    def __init__(self, message: str, path: str = '') -> None:
        if len(message) > _MAX_MESSAGE:
            message = message[: _MAX_MESSAGE - 1] + '…'
        super().__init__(f'{path}: {message}' if path else message)
        self.message = message
        self.path = path

    def at(self, *prefix: str | int) -> InputError:
        """The same error, located inside `prefix` (for errors raised by a helper that saw only a part)."""
        if not prefix:
            return self
        location = '.'.join(str(p) for p in prefix)
        return InputError(self.message, f'{location}.{self.path}' if self.path else location)

    def split(self) -> tuple[str, InputError]:
        """The path's first segment and the same error located below it (`below.at(head)` is this error again)."""
        head, _, rest = self.path.partition('.')
        return head, InputError(self.message, rest)

    def renumbered(self, kept: Sequence[int]) -> InputError:
        """The same error, whose path starts with an index into a list some items were left out of, at the index
        the client gave that item (`kept[index]`). A path that starts otherwise is left as it is."""
        head, below = self.split()
        if not head.isdigit() or int(head) >= len(kept):
            return self
        return below.at(kept[int(head)])
