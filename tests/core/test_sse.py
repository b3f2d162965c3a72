"""`SSEReader`: events split anywhere come out whole, every line ending and field form of the SSE grammar reads
alike, and the bounds hold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from uibridge.core.sse import SSEReader, StreamLimitError

_payloads = st.lists(
    st.text(alphabet=st.characters(codec='utf-8', exclude_characters='\r\n'), max_size=20), min_size=1, max_size=6
)


def _read(chunks: list[bytes], **bounds: int) -> list[bytes]:
    reader = SSEReader(**bounds)
    out: list[bytes] = []
    for chunk in chunks:
        out += reader.feed(chunk)
    return out


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@given(_payloads, st.sampled_from([b'\n', b'\r\n', b'\r']), st.lists(st.integers(0, 10_000), max_size=12))
def test_events_split_anywhere_come_out_whole_whatever_the_line_ends(
    payloads: list[str], newline: bytes, cuts: list[int]
) -> None:
    body = b''.join(b'data: ' + p.encode() + newline + newline for p in payloads)
    assert _read(_split(body, cuts)) == [p.encode() for p in payloads]


def test_fields_comments_and_multi_line_data() -> None:
    body = (
        b': stream-open\n\n'
        b'event: message\nid: 7\nretry: 100\ndata:{"a":1}\n\n'
        b'data: line one\ndata: line two\n\n'
        b': keep-alive\n\n'
        b'data:\n\n'
    )
    assert _read([body]) == [b'{"a":1}', b'line one\nline two', b'']


def test_an_event_is_not_out_before_its_blank_line() -> None:
    reader = SSEReader()
    assert reader.feed(b'data: {"a":1}\n') == []
    assert reader.pending
    assert reader.feed(b'\n') == [b'{"a":1}']
    assert not reader.pending


def test_a_frame_past_the_bound_is_refused_even_split() -> None:
    frame = b'data: ' + b'x' * 100 + b'\n\n'
    assert _read([frame], max_frame_bytes=100) == [b'x' * 100]
    with pytest.raises(StreamLimitError, match='more than 99 bytes'):
        _read([frame], max_frame_bytes=99)
    with pytest.raises(StreamLimitError):
        _read([frame[:50], frame[50:]], max_frame_bytes=99)
    with pytest.raises(StreamLimitError):
        _read([b'data: a\ndata: ' + b'x' * 60 + b'\ndata: ' + b'y' * 60 + b'\n'], max_frame_bytes=100)


def test_bytes_that_never_end_an_event_hit_the_buffer_bound() -> None:
    reader = SSEReader(max_frame_bytes=1_000, max_buffer_bytes=1_000)
    reader.feed(b'data: ' + b'x' * 500)
    with pytest.raises(StreamLimitError, match='unfinished event'):
        reader.feed(b'x' * 600)


def test_bounds_must_be_positive_integers() -> None:
    with pytest.raises(ValueError, match='max_frame_bytes'):
        SSEReader(max_frame_bytes=0)
    with pytest.raises(ValueError, match='max_buffer_bytes'):
        SSEReader(max_buffer_bytes=True)
