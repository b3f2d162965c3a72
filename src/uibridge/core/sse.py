"""`SSEReader`: server-sent events as the bytes of a response arrive, one event's data at a time, bounded.

Both chat protocols stream as SSE (`data: <json>\\n\\n`), so each stream decoder reads its frames here. Sans-IO:
`feed(chunk)` takes whatever the transport handed over (an event may be split anywhere, even inside a `\\r\\n`)
and returns the data of every event it completed.

What it reads is the SSE grammar, not one producer's habits: `\\n`, `\\r\\n` or `\\r` line ends (the `ai` client
takes all three; `@ag-ui/client` only `\\n`), `data:` with or without its space, several `data` lines of one
event joined with `\\n`, and `event:`, `id:`, `retry:` fields and `:` comments ignored. An event without data
(a keep-alive comment) yields nothing.

It is bounded, so a remote cannot make a reader hold unbounded memory: one event's data may not pass
`max_frame_bytes`, and the bytes held waiting for the end of an event (`max_buffer_bytes`) may not pass that
either; past either, `feed` raises `StreamLimitError`, and the stream is beyond saving.
"""

from __future__ import annotations

DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024
"""One event's data: a file the model made rides inline as a data URL, so this is far above any text frame."""
DEFAULT_MAX_BUFFER_BYTES = 32 * 1024 * 1024
"""The bytes held for the event in progress (its data lines, ignored fields and the line being read)."""


class StreamError(ValueError):
    """A stream a decoder cannot read any further: a frame that is not what its protocol sends."""


class StreamLimitError(StreamError):
    """A stream that passed one of a reader's bounds (`max_frame_bytes`, `max_buffer_bytes`)."""


class SSEReader:
    """Reads the events of one SSE stream; `feed` returns each complete event's data (`data` lines joined)."""

    __slots__ = ('_after_cr', '_data', '_data_size', '_held', 'max_buffer_bytes', 'max_frame_bytes')

    def __init__(
        self, *, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES, max_buffer_bytes: int = DEFAULT_MAX_BUFFER_BYTES
    ) -> None:
        for name, value in (('max_frame_bytes', max_frame_bytes), ('max_buffer_bytes', max_buffer_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ValueError(f'{name} must be a positive integer, not {value!r}')
        self.max_frame_bytes = max_frame_bytes
        self.max_buffer_bytes = max_buffer_bytes
        self._held = b''
        """Bytes after the last complete line."""
        self._after_cr = False
        """Whether the last chunk ended with `\\r`: a `\\n` starting the next one belongs to that line end."""
        self._data: list[bytes] = []
        """The data lines of the event in progress, whose blank line has not come yet."""
        self._data_size = 0

    @property
    def pending(self) -> bool:
        """Whether an event was begun and not ended: the stream stopped mid-event if it ends now."""
        return bool(self._data) or bool(self._held.strip())

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._after_cr:
            self._after_cr = False
            if chunk.startswith(b'\n'):
                chunk = chunk[1:]
        held = self._held + chunk if self._held else chunk
        if not self._data and held.startswith(b'data: ') and b'\r' not in held:
            return self._fast(held)
        return self._lines(held)

    def _fast(self, held: bytes) -> list[bytes]:
        """The common shape (one `data: ` line a frame, `\\n` line ends): a split on the blank line."""
        blocks = held.split(b'\n\n')
        tail = blocks.pop()
        frames: list[bytes] = []
        for block in blocks:
            if block.startswith(b'data: ') and b'\n' not in block:
                if len(block) - 6 > self.max_frame_bytes:
                    raise self._too_big('an event', len(block) - 6, self.max_frame_bytes)
                frames.append(block[6:])
            else:
                frames.extend(self._lines(block + b'\n\n'))
        self._held = b''
        frames.extend(self._lines(tail) if tail else ())
        return frames

    def _lines(self, held: bytes) -> list[bytes]:
        if b'\r' in held:
            self._after_cr = held.endswith(b'\r')
            held = held.replace(b'\r\n', b'\n').replace(b'\r', b'\n')
        *lines, tail = held.split(b'\n')
        frames: list[bytes] = []
        for line in lines:
            if not line:
                if self._data:
                    frames.append(b'\n'.join(self._data))
                    self._data = []
                    self._data_size = 0
                continue
            if line.startswith(b'data:'):
                value = line[6:] if line.startswith(b'data: ') else line[5:]
                self._data.append(value)
                self._data_size += len(value) + 1
                if self._data_size - 1 > self.max_frame_bytes:
                    raise self._too_big('an event', self._data_size - 1, self.max_frame_bytes)
            # Any other field (`event:`, `id:`, `retry:`) and `:` comments carry nothing a chat decoder reads.
        self._held = tail
        if len(tail) + self._data_size > self.max_buffer_bytes:
            raise self._too_big('an unfinished event', len(tail) + self._data_size, self.max_buffer_bytes)
        return frames

    @staticmethod
    def _too_big(what: str, size: int, limit: int) -> StreamLimitError:
        return StreamLimitError(f'the stream sent {what} of more than {limit} bytes ({size} so far)')
