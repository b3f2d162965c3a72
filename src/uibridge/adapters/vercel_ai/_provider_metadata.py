"""What uibridge keeps beside the UI message so that a history survives dump -> load exactly.

Two places, one per direction.

**`providerMetadata.uibridge`** (tool parts: `callProviderMetadata.uibridge` / `resultProviderMetadata.uibridge`)
carries what the neutral model holds and a UI part has no field for. The client echoes it back untouched, and
`convertToModelMessages` passes it to providers as `providerOptions.uibridge`, which they ignore.

- `sig` on every part the server authors (text, reasoning and file parts of a response; in call metadata
  for a tool call, in result metadata for its result, under `result` for a denial; inside the
  `retry_feedback` marker): the part's signature (`uibridge.core.provenance`), read back into
  `SignatureClaims` by `load_messages`; `client: true` beside a call's `sig` when the server addressed the
  call to a client tool (signed with the call), `approval: true` when it asked a human to approve it (not
  signed: an approval proves itself by its id). Both marks come back in `ModelResponse.metadata`
  (`uibridge_answered_by`);
- `id`, `signature`, `provider_name` on text, reasoning and file parts: the part's own fields; `filename` on a
  file the model made (a `file` chunk cannot carry the part's own field, so the stream and the dump both write it
  here; a client's part that has the field keeps it there, `_ui_fields`);
- `timestamp`, `dynamic_ref` on system and user text parts; `list`, `empty`, `media_type`, `kind` on user
  parts: what keeps a user prompt's content list exact;
- `retry_feedback` on a system text part: the retry-feedback marker, `retry_feedback_payload(part)` plus its `sig`;
- `response` on the first part of a step: `timestamp`, `model_name`, `provider_name`, `finish_reason`, app
  `metadata` of the response;
- `request` on the first part dumped from a request: `instructions`, app `metadata`, and `new` when the
  request must not merge with the one before it;
- `args` in call metadata: the raw argument string, where `input` cannot give it back; `args_json`: the exact
  text of dict arguments that JavaScript would give back as other text (`core.exact_json`: whole floats,
  integers past 2**53, keys made of digits), which the signature covers;
- in result metadata (under `result` in the call metadata of a denial, which has no result metadata):
  `timestamp`, `index` (the result's place in its request: parallel results arrive in any order, the UI keeps
  them with their calls), the tool's `metadata`, a failure's `outcome` and non-text `content` (a denial's text
  `content` too, when the approval's reason is the client's own and says something else), and `retry`, the
  exact content of a tool-bound `RetryPromptPart`; beside the content, the metadata and the retry's content,
  `content_json` / `metadata_json` when JavaScript would give them back as other text (`core.exact_json.carry_exact`).

**`ModelRequest.metadata` / `ModelResponse.metadata['uibridge_vercel_ai']`** (the sidecar) carries what only the
UI holds, so that `dump_messages(load_messages(ui)) == ui`:

- on a request, `messages[<index of the part a UI message became>]`: that message's `id` (when it is not the id
  `dump_messages` would derive), `metadata`, UI-only `parts` (each with its index `at`), and `bare` when the
  client wrote it without uibridge's metadata (so none is added back);
- on a response, `message` (the same for the assistant message it opens, plus `new` when it follows another
  assistant message), UI-only `parts` of its step (`slot` among the step's UI-only parts, `position` among its
  parts), `approvals` by tool call id, `reasoning_ids` (the UI's own reasoning part ids), `ui_fields` (the
  fields of its UI parts only the UI reads: `_ui_fields`), `bare` and `bare_results` (a step or tool result the
  client wrote).

`data-*` parts of an assistant message are not in the sidecar: they go where the stream's `CustomData` goes
(`uibridge_custom_data`, see `uibridge.core.events`), so history built from either looks the same; nor is which
calls are to tools the UI does not know by name (`dynamic-tool` parts: `uibridge_dynamic_tools`, which the
stream's `PartStart(dynamic=True)` writes too).

Nothing here is trusted on load beyond its shape: it is client input like the rest of the message. A `sig`
is only recorded as the client's claim; `verify_history` decides what it proves.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias, cast

from ...core.exact_json import carry_exact, exact_text, survives_javascript
from ...core.feedback import retry_marker
from ...core.json_text import iso_utc as iso
from ...core.json_text import json_values
from ...core.json_text import parse_iso as parse_iso  # for the loaders, which read a part's times with it
from ...core.messages import (
    RETRY_SUFFIX,
    FilePart,
    ModelResponse,
    RetryFeedbackPart,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from ...core.metadata import app_metadata
from ...core.provenance import Keyring, retry_content
from ...core.records import response_fields, thinking_fields
from .types import UIModel, part_json

PROVIDER_KEY = 'uibridge'
SIDECAR_KEY = 'uibridge_vercel_ai'
SIG_KEY = 'sig'

# The serializer itself: `TypeAdapter.dump_python` only forwards to it, at a cost comparable to the work.
_any = json_values.serializer


def jsonable(value: Any) -> Any:
    """`value` as JSON-compatible Python; what has no JSON form (an exception in an error's ctx) becomes text."""
    return _any.to_python(value, mode='json', fallback=str)


def wrap_metadata(fields: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
    return {PROVIDER_KEY: fields} if fields else None


def response_info(response: ModelResponse, *, with_finish_reason: bool = True) -> dict[str, Any]:
    info = response_fields(response, finish_reason=with_finish_reason)
    metadata = app_metadata(response.metadata)
    if metadata is not None:
        info['metadata'] = jsonable(metadata)
    return info


def part_metadata(
    part: TextPart | ThinkingPart | FilePart, response: dict[str, Any] | None, sig: str | None = None
) -> dict[str, Any]:
    """A response part's `uibridge` metadata: its `id`, a thinking part's `signature` and `provider_name`, a
    file's `filename`, the step's `response` info on its first part, and the part's signature."""
    fields: dict[str, Any] = {}
    if part.id is not None:
        fields['id'] = part.id
    if isinstance(part, ThinkingPart):
        fields.update(thinking_fields(part))
    elif isinstance(part, FilePart) and part.content.filename is not None:
        fields['filename'] = part.content.filename  # a `file` chunk has no field for it (`ai` 7 drops one)
    if response is not None:
        fields['response'] = response
    if sig is not None:
        fields[SIG_KEY] = sig
    return fields


# The names the stream encoder imports (one function serves every response part).
text_metadata = thinking_metadata = file_metadata = part_metadata


def feedback_marker(part: RetryFeedbackPart | RetryPromptPart, keyring: Keyring) -> dict[str, Any]:
    """The retry-feedback marker for `part` (or for its older form, a tool-less `RetryPromptPart`) with its
    signature inside (`retry_feedback_from_payload` ignores it)."""
    marker = retry_marker(part)
    marker[SIG_KEY] = keyring.sign_part(part)
    return marker


def tool_input(call: ToolCallPart) -> Any:
    return jsonable(call.args_as_dict())


def tool_call_metadata(
    call: ToolCallPart, response: dict[str, Any] | None, sig: str | None = None, mark: Any = None
) -> dict[str, Any]:
    """The argument text is kept verbatim only where `input` cannot give it back: no arguments at all, a JSON
    string (`args`), or a dict that JavaScript would give back as other text (`args_json`, `exact_json`).
    `mark` is who answers the call (`ANSWERED_BY_METADATA_KEY`): `client` rides signed beside `sig`."""
    fields: dict[str, Any] = {}
    args = call.args
    if args is None:
        fields['args'] = None
    elif isinstance(args, str):
        as_dict = call.args_as_dict()
        if list(as_dict) != ['INVALID_JSON']:
            fields['args'] = args
    elif not survives_javascript(args):
        fields['args_json'] = exact_text(args)
    if response is not None:
        fields['response'] = response
    if sig is not None:
        fields[SIG_KEY] = sig
    if mark == 'client':
        fields['client'] = True
    elif mark == 'approval':
        fields['approval'] = True
    return fields


ResultState: TypeAlias = Literal['output-available', 'output-error', 'output-denied']

DENIED = 'The tool call was denied.'
"""What a denial says when neither uibridge's metadata nor the approval gives its text."""


def denial_text(fields: dict[str, Any], text: str, reason: str | None) -> dict[str, Any]:
    """`fields` (a denial's result metadata) able to give `text` back: a denial's text rides as its approval's
    reason, except where the approval is the client's own answer, whose reason stays as the client wrote it."""
    if 'content' not in fields and text != (reason or DENIED):
        fields['content'] = text
    return fields


def tool_result(
    part: ToolReturnPart | RetryPromptPart,
    index: int,
    *,
    json_ready: Callable[[Any], Any] = jsonable,
    sig: str | None = None,
) -> tuple[ResultState, Any, dict[str, Any]]:
    """The tool part `state`, its `output` (or `errorText`, or the denial reason), and its result metadata.

    `index` is the result's place in its request: results arrive in any order (parallel tools), while the UI
    keeps them with their calls, in call order. `json_ready` turns the tool's values into JSON-compatible
    Python (`jsonable`, for a dumped `UIMessage`); the stream, whose writer serializes any value the same
    way, passes them through as they are. `sig` is the result's signature.
    """
    fields: dict[str, Any] = {'timestamp': iso(part.timestamp), 'index': index}
    if sig is not None:
        fields[SIG_KEY] = sig
    if isinstance(part, RetryPromptPart):
        text = part.model_response()
        if text.endswith(RETRY_SUFFIX):
            text = text[: -len(RETRY_SUFFIX)]
        fields['retry'] = carry_exact({'content': json_ready(part.content)}, 'content', retry_content(part.content))
        return 'output-error', text, fields
    if part.metadata is not None:
        fields['metadata'] = json_ready(part.metadata)
        carry_exact(fields, 'metadata', part.metadata)
    carry_exact(fields, 'content', part.content)
    if part.outcome == 'success':
        return 'output-available', json_ready(part.content), fields
    text = part.model_response_str()
    if not isinstance(part.content, str):
        fields['content'] = json_ready(part.content)
    if part.outcome == 'denied':
        return 'output-denied', text, fields  # the state says it all
    fields['outcome'] = part.outcome
    return 'output-error', text, fields


DERIVED_ID = re.compile(r'msg_[0-9a-f]{24}')


def derived_message_id(index: int, role: str, parts: Sequence[UIModel]) -> str:
    """The id `dump_messages` gives a UI message that has none of its own: stable for the same history,
    distinct for messages at different positions.

    It hashes each part's JSON as pydantic writes it (`model_dump_json`: fields in declared order, so the bytes
    are stable), built by `part_json` without the per-part Python serializer: the hash reads inline files too,
    and this way the serializing stays in pydantic-core.
    """
    # One buffer, one hash call: the same bytes as feeding the hash piece by piece, fewer calls.
    text = b'\x00'.join([f'{index}\x00{role}'.encode(), *map(part_json, parts)])
    return f'msg_{hashlib.sha256(text).hexdigest()[:24]}'


def sidecar(metadata: dict[str, Any] | None) -> dict[str, Any]:
    if not metadata:
        return {}
    value = metadata.get(SIDECAR_KEY)
    return cast('dict[str, Any]', value) if isinstance(value, dict) else {}
