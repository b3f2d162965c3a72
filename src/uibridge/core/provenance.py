"""Provenance: a keyed signature that proves an item of client-held history is one the server wrote.

A browser holds the conversation between turns and sends it back whole, so everything in it is the client's
word unless the server can check it. Whatever the server authors and a client echoes back (a response's
text, thinking, tool calls and files; the results of tools the server ran; tool retry prompts; retry
feedback; approval requests) carries an HMAC-SHA256 over its *neutral* content, written
by the adapters into the protocol's metadata channel and checked on the way back in
(`uibridge.core.verification`). What a client may author is a short, explicit list: user prompts, the
results of calls the server addressed to a client tool, and answers to approval requests.

A signature covers every field of the part in the form the model or a provider reads it: text as it is, a
tool call's argument text exactly as the server wrote it (`args_as_json_str`), JSON values (a result, its
metadata, a retry's errors) as their exact text (`uibridge.core.exact_json`), timestamps as ISO text, ids. A
client's copy verifies only when it gives all of that back byte for byte; where a protocol's JavaScript client
cannot give a JSON value's text back (whole floats, integers past 2**53, keys made of digits), the adapter
carries the text beside it. A text's citations (validated models of strings and small integers, rebuilt in
their fields' order) are covered in `canonical_json` form: sorted keys, numbers as JavaScript holds them.

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
from .exact_json import exact_text
from .json_text import iso_utc
from .json_text import wire_ready as _wire_ready

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

    # ---------------------------------------------------------------------------------------- finish

    def sign_finish(self, response: m.ModelResponse) -> str:
        """The signature of why `response` stopped (`finish_reason`, when it is one of `SIGNED_FINISH_REASONS`),
        bound to the response's parts as their signatures cover them: a client can echo it with those parts,
        neither move it to another response nor keep it for a response it cut parts from."""
        return self.sign('finish', _finish_payload(response))

    def verify_finish(self, response: m.ModelResponse, signature: object) -> bool:
        return self.verify('finish', _finish_payload(response), signature)

    # ---------------------------------------------------------------------------------------- state

    def sign_state(self, state: Any) -> str:
        """The signature of the shared state a response leaves (`metadata['uibridge_state']`): its exact text."""
        return self.sign('state', _strings_json([exact_text(state)]))

    def verify_state(self, state: Any, signature: object) -> bool:
        return self.verify('state', _strings_json([exact_text(state)]), signature)

    # ----------------------------------------------------------------------------------- approvals

    def approval_id(self, thread_id: str, call: m.ToolCallPart) -> str:
        """The id of the approval request for `call` in this thread: only the server can mint it, and it
        names exactly one call (id, tool and arguments) in one thread."""
        return self.approval_ids(thread_id, call)[0]

    def approval_ids(self, thread_id: str, call: m.ToolCallPart) -> tuple[str, ...]:
        """The approval ids every key gives `call` (the first is the one `approval_id` mints): computed once
        per call, an answer is then checked with `approval_matches`, however many answers name the call."""
        payload = _strings_json([thread_id, call.tool_call_id, call.tool_name, call.args_as_json_str()])
        return tuple('apr_' + self._mac(base, 'approval', payload)[len(_SIGNATURE_PREFIX) :] for base in self._macs)

    def verify_approval(self, approval_id: object, thread_id: str, call: m.ToolCallPart) -> bool:
        return approval_matches(approval_id, self.approval_ids(thread_id, call))


SIGNED_FINISH_REASONS: frozenset[str] = frozenset({'length', 'content_filter', 'error'})
"""The finish reasons a round trip keeps, signed: why a response stopped where its parts do not say it (cut short
by its token limit, filtered, failed). `stop` and `tool_call` are what the parts show (an answer; calls), and
are reset with the rest of a client's copy."""


def signs_finish(response: m.ModelResponse) -> bool:
    """Whether a protocol carries `response`'s finish reason signed: one a round trip keeps
    (`SIGNED_FINISH_REASONS`), of a response with parts (a response that shows nothing has nothing cut short, and a
    client may keep nothing of it)."""
    return response.finish_reason in SIGNED_FINISH_REASONS and bool(response.parts)


def _finish_payload(response: m.ModelResponse) -> bytes:
    claims = [_claim(part, False) for part in response.parts if not isinstance(part, m.OpaquePart)]
    digest = hashlib.sha256(b'\x00'.join(domain.encode() + b'\x00' + payload for domain, payload in claims))
    return _strings_json([response.finish_reason, digest.hexdigest()])


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
    for domain in ('text', 'text/id', 'text/cited', 'thinking', 'thinking/provider', 'tool-call', 'tool-call/client',
                   'tool-return', 'retry-prompt', 'retry-feedback', 'native-tool-call', 'native-tool-return', 'file',
                   'approval', 'state', 'finish')
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
    """The domain and payload a part's signature covers: every field of the part (`part_kind` aside), each in
    the form the model or a provider reads it. JSON values are covered as their exact text (`exact_json`), so a
    client's copy verifies only when it gives that text back byte for byte."""
    if isinstance(part, m.TextPart):
        # What the text cites is shown beside it: a client may not add or change a source. A citation of no
        # source cites nothing, and no protocol carries one: it is left out, so the text verifies after a trip.
        cited = [c.model_dump(mode='json', exclude_none=True) for c in part.citations or () if c.sources]
        if cited:
            covered: list[Any] = [part.content, cited] if part.id is None else [part.content, cited, part.id]
            return 'text/cited', canonical_json(covered)
        if part.id is None:
            return 'text', _strings_json(part.content)  # strings alone: nothing a round trip could change
        # The id is a provider's item id (OpenAI Responses sends it back as the output message's): signed.
        return 'text/id', _strings_json([part.content, part.id])
    if isinstance(part, m.ThinkingPart):
        if part.id is None and part.provider_name is None:
            return 'thinking', _strings_json([part.content, part.signature])
        # A provider acts on these: the OpenAI input sends `id` as the reasoning item's, and `provider_name`
        # decides whose request the thinking goes back into. A client may change neither.
        return 'thinking/provider', _strings_json([part.content, part.signature, part.id, part.provider_name])
    if isinstance(part, m.ToolCallPart):
        domain = 'tool-call/client' if client else 'tool-call'
        return domain, _strings_json([part.tool_call_id, part.tool_name, part.args_as_json_str()])
    if isinstance(part, m.ToolReturnPart):
        payload = [
            part.tool_call_id,
            part.tool_name,
            part.outcome,
            exact_text(part.content),
            exact_text(part.metadata),
            iso_utc(part.timestamp),
        ]
        return 'tool-return', _strings_json(payload)
    if isinstance(part, m.RetryPromptPart):
        content = exact_text(retry_content(part.content))
        return 'retry-prompt', _strings_json([part.tool_call_id, part.tool_name, content, iso_utc(part.timestamp)])
    if isinstance(part, m.RetryFeedbackPart):
        content = exact_text(retry_content(part.content, disclosed=True))
        return 'retry-feedback', _strings_json([part.cause, content, iso_utc(part.timestamp)])
    if isinstance(part, m.NativeToolCallPart):
        payload = [part.tool_call_id, part.tool_name, part.provider_name, part.args_as_json_str()]
        return 'native-tool-call', _strings_json(payload)
    if isinstance(part, m.NativeToolReturnPart):
        payload = [
            part.tool_call_id,
            part.tool_name,
            part.provider_name,
            exact_text(part.content),
            iso_utc(part.timestamp),
        ]
        return 'native-tool-return', _strings_json(payload)
    if isinstance(part, m.OpaquePart):
        raise TypeError('an opaque part is never sent to a client, so never signed')
    assert isinstance(part, m.FilePart)
    digest = hashlib.sha256(part.content.data).hexdigest()
    if part.content.filename is None:
        return 'file', _strings_json([part.content.media_type, digest, part.id])
    # A name is the file's as much as its bytes are (a provider may show it): covered when there is one, so a
    # file without one keeps the signature it always had.
    return 'file', _strings_json([part.content.media_type, digest, part.id, part.content.filename])


def _strings_json(value: str | Sequence[str | None]) -> bytes:
    try:
        return _dumps(value)
    except TypeError:
        return _ascii_json(value).encode()  # a lone surrogate


_ERROR_KEYS = ('type', 'loc', 'msg', 'input', 'url')
_DISCLOSED_ERROR_KEYS = ('type', 'loc', 'msg', 'url')


def retry_content(content: Any, *, disclosed: bool = False) -> Any:
    """A retry's content as the UI carries it and a signature covers it: an error's `ctx` never travels, nor (for
    feedback, `disclosed`) its `input`; each error's keys in `ErrorDetails`' order, the order validation gives
    a client's copy back in (and keys it does not know left out, as validation leaves them out)."""
    if isinstance(content, str):
        return content
    keys = _DISCLOSED_ERROR_KEYS if disclosed else _ERROR_KEYS
    return [{key: error[key] for key in keys if key in error} for error in cast('list[dict[str, Any]]', content)]


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
