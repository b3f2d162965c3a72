"""Provider-executed (native) tool calls as Vercel tool parts with `providerExecuted: true`, and back.

A `NativeToolCallPart` and the `NativeToolReturnPart` that answers it (both in one response) are one
`tool-{name}` part, `output-available` once answered, as the client builds it from `tool-input-*` and
`tool-output-available` chunks with `providerExecuted: true` (which keep `onToolCall` from running it). Both are
response parts: loading puts the return in the response beside its call, never in a request, and nothing ever
waits for it (no approval, no client). Call metadata (`callProviderMetadata.uibridge`) holds `sig`, the step's
`response` record on its first part, the raw `args` (or `args_json`) where `input` cannot give them back and the
call's `provider_name`; result metadata holds `sig`, `timestamp`, the return's `provider_name`, `content_json`
where `output` cannot give the content back (`core.exact_json.carry_exact`), and `position` when the return is
not right after its call in the response (for an `ai` 5 client, which keeps no result metadata, under
`result` in the call metadata, as for any tool). Each is signed in its own domain (`core.provenance`).
"""

from __future__ import annotations

from typing import Any, cast

from ...core.exact_json import carried_value, carry_exact
from ...core.json_text import iso_utc as iso
from ...core.json_text import parse_iso
from ...core.messages import NativeToolCallPart, NativeToolReturnPart, ToolCallPart
from ...core.trusted import construct
from ._load_parts import call_args
from ._provider_metadata import SIG_KEY, jsonable, tool_call_metadata, wrap_metadata
from .types import DynamicToolUIPart, ToolUIPart


def _as_call(call: NativeToolCallPart) -> ToolCallPart:
    # The argument handling of a tool call, which a native call shares.
    return construct(ToolCallPart, {'tool_name': call.tool_name, 'args': call.args, 'tool_call_id': call.tool_call_id})


def native_input(call: NativeToolCallPart) -> dict[str, Any]:
    return _as_call(call).args_as_dict()


def native_call_fields(call: NativeToolCallPart, response: dict[str, Any] | None, sig: str | None) -> dict[str, Any]:
    fields = tool_call_metadata(_as_call(call), response, sig)
    if call.provider_name is not None:
        fields['provider_name'] = call.provider_name
    return fields


def native_result_fields(result: NativeToolReturnPart, sig: str | None, position: int | None) -> dict[str, Any]:
    fields: dict[str, Any] = carry_exact({'timestamp': iso(result.timestamp)}, 'content', result.content)
    if sig is not None:
        fields[SIG_KEY] = sig
    if result.provider_name is not None:
        fields['provider_name'] = result.provider_name
    if position is not None:
        fields['position'] = position
    return fields


def native_tool_part(
    call: NativeToolCallPart,
    result: NativeToolReturnPart | None,
    response: dict[str, Any] | None,
    signatures: tuple[str | None, str | None],
    position: int | None,
    *,
    dynamic: bool = False,
) -> ToolUIPart | DynamicToolUIPart:
    """The tool part for a native call and its return (`position`: where the return sits, when not right after
    its call; `dynamic`: a `dynamic-tool` part, for a tool the UI does not know by name)."""
    call_sig, result_sig = signatures
    fields: dict[str, Any] = {
        **({'type': 'dynamic-tool', 'tool_name': call.tool_name} if dynamic else {'type': f'tool-{call.tool_name}'}),
        'tool_call_id': call.tool_call_id,
        'input': jsonable(native_input(call)),
        'provider_executed': True,
        'call_provider_metadata': wrap_metadata(native_call_fields(call, response, call_sig)),
    }
    model = DynamicToolUIPart if dynamic else ToolUIPart
    if result is None:
        return model(**fields, state='input-available')
    return model(
        **fields,
        state='output-available',
        output=jsonable(result.content),
        result_provider_metadata=wrap_metadata(native_result_fields(result, result_sig, position)),
    )


def native_call(part: ToolUIPart | DynamicToolUIPart, fields: dict[str, Any]) -> NativeToolCallPart:
    provider = fields.get('provider_name')
    return construct(
        NativeToolCallPart,
        {
            'tool_name': part.tool_name,
            'args': call_args(part.input, fields),
            'tool_call_id': part.tool_call_id,
            'provider_name': provider if isinstance(provider, str) else None,
        },
    )


def native_return(part: ToolUIPart | DynamicToolUIPart, fields: dict[str, Any]) -> NativeToolReturnPart | None:
    """The return a provider-executed tool part holds, if it is answered (an error's text is its content)."""
    if part.state not in ('output-available', 'output-error'):
        return None
    sent = part.output if part.state == 'output-available' else part.error_text
    values: dict[str, Any] = {
        'tool_name': part.tool_name,
        'content': carried_value(fields, 'content', sent),
        'tool_call_id': part.tool_call_id,
        'provider_name': cast('str', fields['provider_name']) if isinstance(fields.get('provider_name'), str) else None,
    }
    timestamp = parse_iso(fields.get('timestamp'))
    if timestamp is not None:
        values['timestamp'] = timestamp
    return construct(NativeToolReturnPart, values)
