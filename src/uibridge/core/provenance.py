"""Provenance: a keyed signature that proves an item of client-held history is one the server wrote.

A browser holds the conversation between turns and sends it back whole, so everything in it is the client's
word unless the server can check it. Whatever the server authors and a client echoes back (a response's
text, thinking, tool calls and files; the results of tools the server ran; tool retry prompts; retry
feedback; approval requests) carries an HMAC-SHA256 over a canonical form of its *neutral* content, written
by the adapters into the protocol's metadata channel and checked on the way back in
(`uibridge.core.verification`). What a client may author is a short, explicit list: user prompts, the
results of calls the server addressed to a client tool, and answers to approval requests.

The canonical form is what survives every JavaScript client's re-serialization: keys sorted, numbers as
JavaScript holds them (`1.0` and `1` alike; integers past 2**53 as the nearest double), strings compared
as code points (escaping is irrelevant), non-finite numbers as `null` (what the wire writes). Anything that
changes what the model would see changes the canonical form, so an edited item no longer verifies.

Keys: `Keyring(secret)` takes one secret or a list (the first signs, all verify: rotate by putting the new
key first). `default_keyring()` reads `UIBRIDGE_SECRET` (several keys separated by commas); with none set,
a random key for this process and one warning that history will not verify across restarts or workers.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import os
import secrets
from collections.abc import Sequence
from typing import Any, TypeAlias, cast

import orjson

from . import messages as m
from .json_text import wire_ready as _wire_ready

__all__ = [
    'SECRET_ENV',
    'Keyring',
    'Secret',
    'SignedPart',
    'approval_matches',
    'canonical_json',
    'default_keyring',
]

logger = logging.getLogger('uibridge')

SECRET_ENV = 'UIBRIDGE_SECRET'
Secret: TypeAlias = bytes | str
SignedPart: TypeAlias = m.ModelResponsePart | m.ToolReturnPart | m.RetryPromptPart | m.RetryFeedbackPart
"""The parts the server authors: a response's parts, and the request parts that answer a response."""

_SIGNATURE_PREFIX = 'v1.'
_MAC_HEX = 32
"""128 bits of HMAC-SHA256 in hex: far beyond guessing, and 35 characters per signed item on the wire."""
_SAFE_INTEGER = 2**53


class Keyring:
    """The server's signing keys. The first key signs; every key verifies (rotation)."""

    def __init__(self, secret: Secret | Sequence[Secret] | None = None) -> None:
        if secret is None:
            keys = [secrets.token_bytes(32)]
        elif isinstance(secret, bytes | str):
            keys = [_key(secret)]
        else:
            keys = [_key(item) for item in secret]
        if not keys:
            raise ValueError('a Keyring needs at least one secret')
        self.generated = secret is None
        """Made from no secret: a random key of this process's own, which no other process verifies."""
        self._keys = tuple(keys)
        # Each key's HMAC state after the key, copied per signature: the key is hashed once, not every time.
        self._macs = tuple(hmac.new(key, digestmod=hashlib.sha256) for key in keys)

    @classmethod
    def of(cls, secret: Keyring | Secret | Sequence[Secret] | None) -> Keyring:
        """`secret` as a keyring: a `Keyring` as it is, `None` as the process default (`default_keyring`)."""
        if isinstance(secret, Keyring):
            return secret
        if secret is None:
            return default_keyring()
        return cls(secret)

    # ------------------------------------------------------------------------------------ primitives

    @staticmethod
    def _mac(base: hmac.HMAC, domain: str, payload: bytes) -> str:
        state = base.copy()
        state.update((_DOMAINS.get(domain) or domain.encode() + b'\x00') + payload)
        return _SIGNATURE_PREFIX + state.hexdigest()[:_MAC_HEX]

    def sign(self, domain: str, payload: bytes) -> str:
        return self._mac(self._macs[0], domain, payload)

    def verify(self, domain: str, payload: bytes, signature: object) -> bool:
        if not isinstance(signature, str) or len(signature) > 64 or not signature.isascii():
            return False
        macs = self._macs
        if len(macs) == 1:
            return _compare(self._mac(macs[0], domain, payload), signature)
        # Every key is tried, whatever the outcome, so the time taken says nothing about which key matched.
        matched = False
        for base in macs:
            matched |= _compare(self._mac(base, domain, payload), signature)
        return matched

    # --------------------------------------------------------------------------------------- parts

    def sign_part(self, part: SignedPart, *, client: bool = False) -> str:
        """The signature of a server-authored part. `client` marks a tool call the server addressed to a
        client tool: its result may then come from the client, and a client cannot set the mark itself."""
        domain, payload = _claim(part, client)
        return self.sign(domain, payload)

    def verify_part(self, part: SignedPart, signature: object, *, client: bool = False) -> bool:
        domain, payload = _claim(part, client)
        return self.verify(domain, payload, signature)

    # ----------------------------------------------------------------------------------- approvals

    def approval_id(self, thread_id: str, call: m.ToolCallPart) -> str:
        """The id of the approval request for `call` in this thread: only the server can mint it, and it
        names exactly one call (id, tool and arguments) in one thread."""
        return self.approval_ids(thread_id, call)[0]

    def approval_ids(self, thread_id: str, call: m.ToolCallPart) -> tuple[str, ...]:
        """The approval ids every key gives `call` (the first is the one `approval_id` mints): computed once
        per call, an answer is then checked with `approval_matches`, however many answers name the call."""
        payload = canonical_json([thread_id, call.tool_call_id, call.tool_name, call.args_as_dict()])
        return tuple('apr_' + self._mac(base, 'approval', payload)[len(_SIGNATURE_PREFIX) :] for base in self._macs)

    def verify_approval(self, approval_id: object, thread_id: str, call: m.ToolCallPart) -> bool:
        return approval_matches(approval_id, self.approval_ids(thread_id, call))


def approval_matches(approval_id: object, expected: tuple[str, ...]) -> bool:
    """Whether a client's approval id is one of `expected` (`Keyring.approval_ids`), in constant time."""
    if not isinstance(approval_id, str) or len(approval_id) > 64:
        return False
    given = approval_id.encode('ascii', 'replace')
    matched = False
    for candidate in expected:
        matched |= hmac.compare_digest(candidate.encode(), given)
    return matched


_compare = hmac.compare_digest

_DOMAINS = {
    domain: domain.encode() + b'\x00'
    for domain in ('text', 'thinking', 'tool-call', 'tool-call/client', 'tool-return', 'retry-prompt',
                   'retry-feedback', 'file', 'approval')
}  # fmt: skip


def _key(secret: Secret) -> bytes:
    key = secret.encode() if isinstance(secret, str) else secret
    if not key:
        raise ValueError('a signing secret cannot be empty')
    return key


_default: Keyring | None = None


def default_keyring() -> Keyring:
    """The process's keyring: `UIBRIDGE_SECRET` (comma-separated keys, the first signs), or else a random key,
    with one warning, since history signed with it does not verify after a restart or in another worker."""
    global _default
    if _default is None:
        configured = [item.strip() for item in os.environ.get(SECRET_ENV, '').split(',') if item.strip()]
        if configured:
            _default = Keyring(configured)
        else:
            logger.warning(
                'No %s is set: uibridge signs history with a random key for this process. History and approval '
                'requests sent to clients will not verify after a restart or in another worker; set %s (the '
                'same value everywhere) for that.',
                SECRET_ENV,
                SECRET_ENV,
            )
            _default = Keyring()
    return _default


# ------------------------------------------------------------------------------------ canonical form


def _claim(part: SignedPart, client: bool) -> tuple[str, bytes]:
    """The domain and canonical payload a part's signature covers: everything the model is shown of it."""
    if isinstance(part, m.TextPart):
        # What the text cites is shown beside it: a client may not add or change a source. A citation of no
        # source cites nothing, and no protocol carries one: it is left out, so the text verifies after a trip.
        cited = [c.model_dump(mode='json', exclude_none=True) for c in part.citations or () if c.sources]
        if cited:
            return 'text/cited', canonical_json([part.content, cited])
        return 'text', _strings_json(part.content)  # strings alone: nothing a round trip could change
    if isinstance(part, m.ThinkingPart):
        if part.id is None and part.provider_name is None:
            return 'thinking', _strings_json([part.content, part.signature])
        # A provider acts on these: the OpenAI input sends `id` as the reasoning item's, and `provider_name`
        # decides whose request the thinking goes back into. A client may change neither.
        return 'thinking/provider', _strings_json([part.content, part.signature, part.id, part.provider_name])
    if isinstance(part, m.ToolCallPart):
        domain = 'tool-call/client' if client else 'tool-call'
        return domain, canonical_json([part.tool_call_id, part.tool_name, part.args_as_dict()])
    if isinstance(part, m.ToolReturnPart):
        return 'tool-return', canonical_json([part.tool_call_id, part.tool_name, part.outcome, part.content])
    if isinstance(part, m.RetryPromptPart):
        return 'retry-prompt', canonical_json([part.tool_call_id, part.tool_name, _errors(part.content, False)])
    if isinstance(part, m.RetryFeedbackPart):
        return 'retry-feedback', canonical_json([part.cause, _errors(part.content, True)])
    if isinstance(part, m.NativeToolCallPart):
        return 'native-tool-call', canonical_json(
            [part.tool_call_id, part.tool_name, part.provider_name, part.args_as_dict()]
        )
    if isinstance(part, m.NativeToolReturnPart):
        payload = [part.tool_call_id, part.tool_name, part.provider_name, part.content]
        return 'native-tool-return', canonical_json(payload)
    if isinstance(part, m.OpaquePart):
        raise TypeError('an opaque part is never sent to a client, so never signed')
    assert isinstance(part, m.FilePart)
    digest = hashlib.sha256(part.content.data).hexdigest()
    return 'file', canonical_json([part.content.media_type, digest])


def _strings_json(value: str | list[str | None]) -> bytes:
    try:
        return _dumps(value)
    except TypeError:
        return _ascii_json(value).encode()  # a lone surrogate


def _errors(content: Any, without_input: bool) -> Any:
    """Retry content as the UI carries it: an error's `ctx` never travels, nor (for feedback) its `input`."""
    if isinstance(content, str):
        return content
    dropped = ('ctx', 'input') if without_input else ('ctx',)
    return [{k: v for k, v in error.items() if k not in dropped} for error in cast('list[dict[str, Any]]', content)]


def canonical_json(value: Any) -> bytes:
    """`value` as the bytes a signature covers: the same for the server's value and for what any JSON round
    trip through a browser gives back.

    Compact JSON with sorted keys (so key order never matters), numbers as JavaScript holds them (`1.0` as
    `1`, an integer past 2**53 as the nearest double, NaN and infinities as `null`), what is not JSON as pydantic
    writes it for the wire. orjson writes it (a tenth of the `json` module's time: every signature pays this);
    a few byte searches on the text tell whether a number needs JavaScript's reading (`_may_differ`), and the
    rare value that does, or that orjson refuses, is normalised first (`_slow_canonical`).
    """
    try:
        text = _dumps(value, default=_not_json, option=_SORTED)
    except TypeError:  # orjson.JSONEncodeError included: a lone surrogate, a huge integer, a non-JSON value
        return _slow_canonical(value)
    if _may_differ(text):
        return _slow_canonical(value)
    return text


_SORTED = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_dumps = orjson.dumps
_DIGITS_AS_ZERO = bytes.maketrans(b'123456789', b'000000000')


def _not_json(value: Any) -> Any:
    # What orjson would write its own way (datetimes, dataclasses, enums...): the wire's way instead.
    raise TypeError


def _may_differ(text: bytes) -> bool:
    """Whether JavaScript could give `text` back otherwise: a float spelled with `.0` or a positive exponent
    (perhaps a whole number, which comes back as an integer), or sixteen digits in a row (an integer past
    2**53). Strings may match too; they only cost the slow path."""
    if b'.0' in text or b'e+' in text:
        return True
    return b'0000000000000000' in text.translate(_DIGITS_AS_ZERO)


def _slow_canonical(value: Any) -> bytes:
    normalized = _javascript_value(_wire_ready(value))
    try:
        return _dumps(normalized, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        # A lone surrogate, which has no UTF-8 form: escaped, it has one spelling (and the client's copy holds it
        # too, so it takes this path as well).
        return _ascii_json(normalized).encode()


_ascii_json = json.JSONEncoder(sort_keys=True, separators=(',', ':'), ensure_ascii=True, allow_nan=False).encode


def _javascript_value(value: Any) -> Any:
    """A JSON-compatible value as JavaScript would hand it back (see `canonical_json`)."""
    if isinstance(value, str) or value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
            return value
        try:
            return _number(float(value))
        except OverflowError:
            return None  # JavaScript reads it as Infinity, which JSON writes as null
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, dict):
        return {str(k): _javascript_value(v) for k, v in cast('dict[Any, Any]', value).items()}
    if isinstance(value, list | tuple):
        return [_javascript_value(item) for item in cast('list[Any]', value)]
    return str(value)


def _number(value: float) -> Any:
    # JavaScript has one number type: `1.0` comes back as `1`, and an integer past 2**53 as a nearby double.
    if not math.isfinite(value):
        return None
    if value.is_integer() and -_SAFE_INTEGER <= value <= _SAFE_INTEGER:
        return int(value)
    return value
