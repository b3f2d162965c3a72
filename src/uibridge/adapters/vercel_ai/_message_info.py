"""What a Vercel UI message holds for its whole assistant turn: shared state, message metadata, late response info.

- **Shared state**: one `data-state` part with the id `state` per assistant message, whose `data` is the whole
  state. The client keeps one part per id and message (a later chunk with the id replaces the data of the part
  already there, wherever it is), so the reducer is "the latest part with id `state` wins". Loading puts it on
  the message's last response (`uibridge_state`, where the collector keeps a run's state) and keeps where the
  part sat (`state_at` in the sidecar: the step within the message, its `position` among the step's parts and
  `slot` among its UI-only parts), so a dump writes it back in place; without that, at the end of the step of
  the response that holds it. The state's signature (`state_sig`, `Keyring.sign_state`) and, where the part
  cannot give it back exactly, its text (`state_json`) ride in the message metadata's `uibridge` entry (the
  stream sends them at its end); a state without one is the client's (`state_unsigned` in the sidecar).
- **Message metadata** (`UIMessage.metadata`): the application's keys (`uibridge_message_metadata`, merged over
  the message's responses) at top level; under the reserved `uibridge` key, the late response info: `steps`,
  by the step's index within the message, each step's `usage` (non-zero counts), `model_name`,
  `provider_name`, `finish_reason`, `provider_response_id` and `provider_details` as `core.records` writes them,
  and beside them the message's total `usage` and the latest of the other four. A finish reason a round trip keeps
  (`SIGNED_FINISH_REASONS`: cut short, filtered, failed) always has a step entry, with its signature
  (`finish_sig`, `Keyring.sign_finish`, over the step's parts); loading records it for `verify_history`.
  The client deep-merges each `message-metadata` chunk into what it holds, so the stream sends only a step's entry
  and the new totals; a dump writes the same from the responses (those with usage, a response id or details, or
  a signed finish reason: what a stream's `ResponseInfo` sends). Loading reads each step's entry back onto its
  response and recomputes the rest.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from ...core.events import MESSAGE_METADATA_KEY, STATE_METADATA_KEY
from ...core.exact_json import carried_value, carry_exact
from ...core.messages import ModelResponse
from ...core.provenance import SIGNED_FINISH_REASONS, Keyring, signs_finish
from ...core.records import read_response_fields, response_fields
from ...core.usage import Usage, add_usage
from ...core.verification import SignatureClaims
from ._provider_metadata import PROVIDER_KEY, SIDECAR_KEY, jsonable, response_info, sidecar
from .types import DataUIPart, UIMessagePart

STATE_TYPE = 'data-state'
STATE_ID = 'state'
STATE_SIG_KEY = 'state_sig'
FINISH_SIG_KEY = 'finish_sig'
_COUNTS = set(Usage.model_fields)  # a stored history's own extra keys are no count the UI shows
_LATEST = ('model_name', 'provider_name', 'finish_reason', 'provider_response_id')


def state_part(state: Any) -> DataUIPart:
    return DataUIPart(type=STATE_TYPE, id=STATE_ID, data=jsonable(state))


def is_state_part(part: UIMessagePart) -> bool:
    return isinstance(part, DataUIPart) and part.type == STATE_TYPE and part.id == STATE_ID


def state_placement(response: ModelResponse) -> tuple[int, int, int] | None:
    """The `(step, position, slot)` kept for the response's state part, when it is valid."""
    kept = sidecar(response.metadata).get('state_at')
    if not isinstance(kept, dict):
        return None
    values = [cast('dict[str, Any]', kept).get(key) for key in ('step', 'position', 'slot')]
    if all(isinstance(value, int) and value >= 0 for value in values):
        return cast('tuple[int, int, int]', tuple(values))
    return None


def _counted(usage: Usage | None) -> bool:
    return usage is not None and bool(usage.model_dump(include=_COUNTS, exclude_defaults=True))


def late_info(response: ModelResponse, keyring: Keyring | None = None) -> dict[str, Any] | None:
    """A step's entry under `uibridge.steps`, for a response with what only its end tells; with `keyring`, the
    signature of a finish reason a round trip keeps (`FINISH_SIG_KEY`, `Keyring.sign_finish`)."""
    signed = signs_finish(response)
    if (
        not signed
        and not _counted(response.usage)
        and response.provider_response_id is None
        and response.provider_details is None
    ):
        return None  # a usage of nothing (a stored history's default) is no news to show
    fields = response_fields(response)
    del fields['timestamp']
    if signed and keyring is not None:
        fields[FINISH_SIG_KEY] = keyring.sign_finish(response)
    return fields


def summary(entries: Iterable[Any]) -> dict[str, Any]:
    """The message's totals over its steps' entries (in step order): the usage added up, the latest of the rest:
    what the client's deep merge of the stream's chunks gives."""
    total: Usage | None = None
    latest: dict[str, Any] = {}
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        entry = cast('dict[str, Any]', entry)
        usage = read_response_fields(entry).get('usage')
        if isinstance(usage, Usage):
            total = usage if total is None else add_usage(total, usage)
        latest.update((key, entry[key]) for key in _LATEST if key in entry)
    if total is not None:
        latest = {'usage': total.model_dump(mode='json', exclude_defaults=True), **latest}
    return latest


def message_metadata(responses: list[ModelResponse], kept: Any = None, keyring: Keyring | None = None) -> Any:
    """`UIMessage.metadata` for an assistant message made of `responses` (`kept`: what load kept of a client's
    metadata that is no object, written back as it was); with `keyring`, the signature of the state the message
    leaves (`state_fields`)."""
    if kept is not None:
        return kept
    metadata: dict[str, Any] = {}
    steps: dict[str, Any] = {}
    state: tuple[Any] | None = None
    for step, response in enumerate(responses):
        if response.metadata:
            app = response.metadata.get(MESSAGE_METADATA_KEY)
            if isinstance(app, dict):
                metadata.update(cast('dict[str, Any]', jsonable(app)))
            if STATE_METADATA_KEY in response.metadata:
                state = (response.metadata[STATE_METADATA_KEY],)
        info = late_info(response, keyring)
        if info is not None:
            steps[str(step)] = info
    if steps:
        metadata[PROVIDER_KEY] = {**summary(steps.values()), 'steps': steps}
    if state is not None and keyring is not None and not sidecar(responses[-1].metadata).get('state_unsigned'):
        metadata[PROVIDER_KEY] = {**metadata.get(PROVIDER_KEY, {}), **state_fields(state[0], keyring)}
    return metadata or None


def state_fields(state: Any, keyring: Keyring) -> dict[str, Any]:
    """What the message metadata's `uibridge` entry carries for the state a message leaves: its signature
    (`state_sig`), and its exact text (`state_json`) where the `data-state` part cannot give it back."""
    return carry_exact({STATE_SIG_KEY: keyring.sign_state(state)}, 'state', state)


def read_state(metadata: Any, state: Any) -> tuple[Any, Any]:
    """The state a message's `data-state` part holds, as its metadata's exact text gives it back when it carries
    one, and the signature it came with."""
    ours = cast('dict[str, Any]', metadata).get(PROVIDER_KEY) if isinstance(metadata, dict) else None
    if not isinstance(ours, dict):
        return state, None
    fields = cast('dict[str, Any]', ours)
    return carried_value(fields, 'state', state), fields.get(STATE_SIG_KEY)


def read_message_metadata(
    metadata: dict[str, Any], responses: list[ModelResponse], claims: SignatureClaims | None = None
) -> None:
    """Put an assistant message's object metadata back: each step's late info on its response (and into `claims`
    the signature of its finish reason), the application's keys on the last response (`responses`: the
    message's, at least one)."""
    ours = metadata.get(PROVIDER_KEY)
    steps = cast('dict[str, Any]', ours).get('steps') if isinstance(ours, dict) else None
    for key, entry in cast('dict[str, Any]', steps).items() if isinstance(steps, dict) else ():
        if key.isdigit() and int(key) < len(responses) and isinstance(entry, dict):
            fields = read_response_fields(cast('dict[str, Any]', entry))
            fields.pop('timestamp', None)
            if not _counted(fields.get('usage')):
                fields.pop('usage', None)
            # Only an entry `late_info` writes counts: a dump would write no other back (the rest of a step's
            # fields ride on its first part).
            if {'usage', 'provider_response_id', 'provider_details'} & fields.keys() or (
                fields.get('finish_reason') in SIGNED_FINISH_REASONS
            ):
                for name, value in fields.items():
                    setattr(responses[int(key)], name, value)
                if claims is not None:
                    claims.add_finish(responses[int(key)], cast('dict[str, Any]', entry).get(FINISH_SIG_KEY))
    app = {key: value for key, value in metadata.items() if key != PROVIDER_KEY}
    if app:
        last = responses[-1]
        last.metadata = {**(last.metadata or {}), MESSAGE_METADATA_KEY: app}


def keep_state(responses: list[ModelResponse], state: Any, placement: tuple[int, int, int], *, signed: bool) -> None:
    """The state a message's `data-state` part holds, on its last response, with where the part sat (and
    `state_unsigned` when the message carried no signature for it: a client's own, which a dump leaves so)."""
    last = responses[-1]
    metadata = dict(last.metadata or {})
    metadata[STATE_METADATA_KEY] = state
    step, position, slot = placement
    side = dict(cast('dict[str, Any]', metadata.get(SIDECAR_KEY) or {}))
    side['state_at'] = {'step': step, 'position': position, 'slot': slot}
    if not signed:
        side['state_unsigned'] = True
    metadata[SIDECAR_KEY] = side
    last.metadata = metadata


_LATE_KEYS = ('finish_reason', 'usage', 'provider_response_id', 'provider_details')


def part_record(response: ModelResponse, *, with_finish_reason: bool = True) -> dict[str, Any]:
    """The `response` record a step's first part carries: what a stream knows when that part starts. What the
    message metadata's step entry carries (`late_info`) is left to it (a stream learns it only later)."""
    record = response_info(response, with_finish_reason=with_finish_reason)
    # `late_info`'s first test inline: a stream runs this for every step, and most have no late info.
    if (
        response.usage is not None
        or response.provider_response_id is not None
        or response.provider_details is not None
        or signs_finish(response)
    ) and late_info(response) is not None:
        for key in _LATE_KEYS:
            record.pop(key, None)
    return record
