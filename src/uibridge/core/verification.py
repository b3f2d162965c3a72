"""Verifying client-held history: keep what the server can prove it wrote, and what a client may author.

A decoder (`load_messages`) reads, beside each part it builds, the signature the client echoed back for it
and records it in `SignatureClaims`. `verify_history` then keeps:

- every part of a `ModelResponse` whose signature verifies (text, thinking, tool calls, files);
- a tool result (`ToolReturnPart`, tool-bound `RetryPromptPart`) whose signature verifies, or a
  `ToolReturnPart` without one that answers a call the server addressed to a *client* tool (a verified call
  signed with the client mark); in both cases only when it answers a kept call of the response just before
  it that no other result answered;
- a `RetryFeedbackPart` or tool-less `RetryPromptPart` whose signature verifies;
- user prompts and system prompts (whether a client may send a system prompt is `sanitize_messages`'s call);

and drops the rest. Default-deny for everything else: a kept message is rebuilt from its kept parts (whose
signatures cover every field they have) and nothing more, unless the server vouches for the whole message
(`SignatureClaims.vouch`: its own stored history). A response's model and provider names, timestamp, finish
reason (unless it is one of `SIGNED_FINISH_REASONS` and its own signature, `Keyring.sign_finish`, verifies over the
kept parts), usage, provider response id and details, and its metadata (the application's keys, pydantic-ai's
reserved `__pydantic_ai__`, uibridge's bookkeeping) are the client's word and are reset: its metadata keeps only
the `client` marks of its verified calls (which their signatures cover) and the shared state it carries when
that state's own signature verifies (`Keyring.sign_state`); a request's metadata is reset too (its
`instructions` are `sanitize_messages`' to strip). Then the history is made well formed for a provider: a
call that no kept result answers
is dropped unless it is still pending (`pending_tool_calls`: a call of the last response, with nothing but
answers to that response's other calls after it), so every call has exactly one result, no result is an
orphan, and the calls left unanswered are the pending ones.
A tool call id used twice anywhere in the history is an `InputError` (a 422): it is never legitimate, and
it is how a forged call would hide behind an approved one. Linear: one signature check per claimed part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import messages as m
from .errors import InputError
from .events import ANSWERED_BY_METADATA_KEY, STATE_METADATA_KEY
from .provenance import SIGNED_FINISH_REASONS, Keyring, SignedPart
from .trusted import construct, replace

RESERVED_METADATA_KEY = '__pydantic_ai__'
"""The metadata key pydantic-ai keeps framework state under and acts on in later runs: never taken from a client
(pydantic-ai's own `sanitize_messages` drops it from untrusted history too, keeping the rest)."""


@dataclass(frozen=True, slots=True)
class Claim:
    signature: str
    client: bool = False
    """On a tool call: the server addressed it to a client tool, so the client may answer it."""
    trusted: bool = False
    """The server's own, from its store (`SignatureClaims.trust`): kept with no signature to check."""


class SignatureClaims:
    """The signatures a decoder read beside the parts it built, by part (identity, not equality: two equal
    texts in a history are two claims). Holds the parts, so an id is never reused while the claims live."""

    __slots__ = ('_claims', '_finishes', '_states', '_vouched')

    def __init__(self) -> None:
        self._claims: dict[int, tuple[object, Claim]] = {}
        self._states: dict[int, tuple[m.ModelResponse, str]] = {}
        self._finishes: dict[int, tuple[m.ModelResponse, str]] = {}
        self._vouched: dict[int, m.ModelMessage] = {}

    def add(self, part: object, signature: object, *, client: bool = False) -> None:
        """Record what the client claims for `part`; anything but a string is no claim at all."""
        if isinstance(signature, str) and signature:
            self._claims[id(part)] = (part, Claim(signature, client is True))

    def add_state(self, response: m.ModelResponse, signature: object) -> None:
        """Record the signature the client sent for the shared state `response` carries (`uibridge_state`)."""
        if isinstance(signature, str) and signature:
            self._states[id(response)] = (response, signature)

    def add_finish(self, response: m.ModelResponse, signature: object) -> None:
        """Record the signature the client sent for why `response` stopped (`Keyring.sign_finish`)."""
        if isinstance(signature, str) and signature:
            self._finishes[id(response)] = (response, signature)

    def finish_signature(self, response: m.ModelResponse) -> str | None:
        found = self._finishes.get(id(response))
        return found[1] if found is not None and found[0] is response else None

    def trust(self, part: object, *, client: bool = False) -> None:
        """`part` is the server's own (its stored history, never a client's word): it is kept as a verified part
        would be, without computing a signature for it."""
        self._claims[id(part)] = (part, Claim('', client, trusted=True))

    def state_signature(self, response: m.ModelResponse) -> str | None:
        found = self._states.get(id(response))
        return found[1] if found is not None and found[0] is response else None

    def vouch(self, message: m.ModelMessage) -> None:
        """`message` is the server's own (its stored history), fields no signature covers included."""
        self._vouched[id(message)] = message

    def vouched(self, message: m.ModelMessage) -> bool:
        return self._vouched.get(id(message)) is message

    def get(self, part: object) -> Claim | None:
        found = self._claims.get(id(part))
        return found[1] if found is not None and found[0] is part else None

    def __len__(self) -> int:
        return len(self._claims)


@dataclass
class Verified:
    """What `verify_history` kept, and how much of each kind it dropped (for the server's log)."""

    messages: list[m.ModelMessage]
    feedback: set[int] = field(default_factory=set[int])
    """`id()`s of the retry feedback parts (either form) that verified: the application's own, kept through
    sanitizing."""
    dropped: dict[str, int] = field(default_factory=dict[str, int])
    reserved: int = 0
    """How many messages came with pydantic-ai's reserved metadata key (`__pydantic_ai__`), which is reset."""

    def drop(self, kind: str) -> None:
        self.dropped[kind] = self.dropped.get(kind, 0) + 1


def verify_history(messages: Sequence[m.ModelMessage], claims: SignatureClaims, keyring: Keyring) -> Verified:
    """The part of `messages` the server can vouch for (see the module docstring); the input is left untouched.

    Raises `InputError` when two tool calls share an id.
    """
    _refuse_duplicate_calls(messages)
    result = Verified(messages=[])
    kept: list[tuple[m.ModelMessage, list[m.ModelRequestPart] | list[m.ModelResponsePart], dict[str, str]]] = []
    open_calls: dict[str, bool] = {}
    """The kept calls of the last response that no result has answered yet: id -> addressed to a client tool."""
    open_response: list[m.ModelResponsePart] | None = None

    verify_part = keyring.verify_part
    claimed = claims.get

    def verifies(part: SignedPart) -> bool:
        claim = claimed(part)
        return claim is not None and (claim.trusted or verify_part(part, claim.signature))

    for message in messages:
        if isinstance(message, m.ModelResponse):
            if open_response is not None:
                _drop_unanswered(open_response, open_calls, result)
            response_parts: list[m.ModelResponsePart] = []
            open_calls = {}
            for part in message.parts:
                if isinstance(part, m.ToolCallPart):
                    claim = claimed(part)
                    client = claim is not None and claim.client
                    if claim is not None and (claim.trusted or verify_part(part, claim.signature, client=client)):
                        response_parts.append(part)
                        open_calls[part.tool_call_id] = client
                    else:
                        result.drop('tool call')
                elif verifies(part):
                    response_parts.append(part)
                else:
                    result.drop(part.part_kind)
            response_parts = _pair_native_parts(response_parts, result)
            open_response = response_parts
            kept.append((message, response_parts, {call: 'client' for call, client in open_calls.items() if client}))
            continue
        request_parts: list[m.ModelRequestPart] = []
        answers_only = True
        for part in message.parts:
            if isinstance(part, m.ToolReturnPart | m.RetryPromptPart) and (
                part.tool_name is not None or isinstance(part, m.ToolReturnPart)
            ):
                call_id = part.tool_call_id
                if call_id not in open_calls:
                    result.drop('tool result')  # an orphan, a second answer, or the answer to a dropped call
                elif verifies(part) or (isinstance(part, m.ToolReturnPart) and open_calls[call_id]):
                    del open_calls[call_id]
                    request_parts.append(part)
                else:
                    result.drop('tool result')
            elif isinstance(part, m.RetryFeedbackPart | m.RetryPromptPart):
                answers_only = False
                if verifies(part):
                    request_parts.append(part)
                    result.feedback.add(id(part))
                else:
                    result.drop(part.part_kind)
            elif isinstance(part, m.OpaquePart):
                result.drop(part.part_kind)  # no client authors a kind the server does not know
            else:
                answers_only = False
                request_parts.append(part)
        if not answers_only:
            # The conversation moved on (a prompt, feedback): what the response left unanswered stays so.
            if open_response is not None:
                _drop_unanswered(open_response, open_calls, result)
            open_response = None
            open_calls = {}
        kept.append((message, request_parts, {}))

    for message, parts, client_marks in kept:
        if not parts:
            continue
        if claims.vouched(message):
            result.messages.append(message if len(parts) == len(message.parts) else replace(message, {'parts': parts}))
        else:
            result.messages.append(_client_copy(message, parts, client_marks, claims, keyring, result))
    return result


def _client_copy(
    message: m.ModelMessage,
    parts: list[m.ModelRequestPart] | list[m.ModelResponsePart],
    client_marks: dict[str, str],
    claims: SignatureClaims,
    keyring: Keyring,
    result: Verified,
) -> m.ModelMessage:
    """A message of client-held history as the agent gets it: its kept parts, and of its own fields only what a
    signature covers; every other field at its default (see the module docstring). No field of the client's
    copy is trusted for being there: model names select provider behaviour, metadata is where pydantic-ai and
    applications keep state they act on, and a client could otherwise make its words pass for theirs."""
    metadata = message.metadata
    if metadata and RESERVED_METADATA_KEY in metadata:
        result.reserved += 1
    if isinstance(message, m.ModelRequest):
        return construct(m.ModelRequest, {'parts': parts, 'instructions': message.instructions})
    own: dict[str, Any] = {}
    if client_marks:
        own[ANSWERED_BY_METADATA_KEY] = client_marks  # the marks the calls' own signatures covered
    if metadata and STATE_METADATA_KEY in metadata:
        state = metadata[STATE_METADATA_KEY]
        if keyring.verify_state(state, claims.state_signature(message)):
            own[STATE_METADATA_KEY] = state
        else:
            result.drop('state')
    fields: dict[str, Any] = {'parts': parts, 'metadata': own or None}
    if message.finish_reason in SIGNED_FINISH_REASONS:
        kept = construct(m.ModelResponse, {**fields, 'finish_reason': message.finish_reason})
        if keyring.verify_finish(kept, claims.finish_signature(message)):
            return kept
        result.drop('finish reason')
    return construct(m.ModelResponse, fields)


def pending_tool_calls(history: Sequence[m.ModelMessage]) -> list[m.ToolCallPart]:
    """The tool calls the conversation still waits on: the unanswered calls of the responses that end the
    history, where nothing but results for those responses' calls may follow. A response may call a server
    tool and a client (or approval-gated) tool side by side; the first is answered at once, the other stays
    pending. (In a verified history only the last response can hold unanswered calls.)"""
    answered: set[str] = set()
    calls: list[m.ToolCallPart] = []
    index = len(history)
    while index and isinstance(history[index - 1], m.ModelRequest):
        index -= 1
        for part in history[index].parts:
            if not isinstance(part, m.ToolReturnPart | m.RetryPromptPart) or part.tool_name is None:
                return []
            answered.add(part.tool_call_id)
    while index and isinstance(history[index - 1], m.ModelResponse):
        index -= 1
        calls[:0] = [p for p in history[index].parts if isinstance(p, m.ToolCallPart)]
    if not answered <= {call.tool_call_id for call in calls}:
        return []  # a result for some other call: these responses are not what the history waits on
    return [call for call in calls if call.tool_call_id not in answered]


def _drop_unanswered(parts: list[m.ModelResponsePart], open_calls: dict[str, bool], result: Verified) -> None:
    if not open_calls:
        return
    parts[:] = [p for p in parts if not (isinstance(p, m.ToolCallPart) and p.tool_call_id in open_calls)]
    for _ in open_calls:
        result.drop('unanswered tool call')
    open_calls.clear()


def _pair_native_parts(parts: list[m.ModelResponsePart], result: Verified) -> list[m.ModelResponsePart]:
    """`parts` with each provider-run call and return kept only beside its other half (one return a call): a
    return whose call was dropped, or a call whose return was, is no conversation a provider accepts (Anthropic
    refuses an orphan result block), and a second return for one call was never the server's."""
    calls = {p.tool_call_id for p in parts if isinstance(p, m.NativeToolCallPart)}
    if not calls and not any(isinstance(p, m.NativeToolReturnPart) for p in parts):
        return parts
    returned: set[str] = set()
    for part in parts:
        if (
            isinstance(part, m.NativeToolReturnPart)
            and part.tool_call_id in calls
            and part.tool_call_id not in returned
        ):
            returned.add(part.tool_call_id)
    kept: list[m.ModelResponsePart] = []
    answered: set[str] = set()
    for part in parts:
        if isinstance(part, m.NativeToolCallPart) and part.tool_call_id not in returned:
            result.drop(part.part_kind)
        elif isinstance(part, m.NativeToolReturnPart):
            if part.tool_call_id not in returned or part.tool_call_id in answered:
                result.drop(part.part_kind)
                continue
            answered.add(part.tool_call_id)
            kept.append(part)
        else:
            kept.append(part)
    return kept


def _refuse_duplicate_calls(messages: Sequence[m.ModelMessage]) -> None:
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, m.ModelResponse):
            continue
        for part in message.parts:
            if isinstance(part, m.ToolCallPart | m.NativeToolCallPart):
                if part.tool_call_id in seen:
                    raise InputError('two tool calls in the history share one tool call id', f'history.{index}')
                seen.add(part.tool_call_id)
