"""Approval ids the server can recognise as its own.

A client answers an approval request by echoing its id. If the id were just the tool call's id, a client
could write a tool call into its history, "approve" it, and make the server run a tool on its own word.
So the server derives the id from the call (its id, tool name and arguments) with a keyed hash: only the
server can mint one, and an edited call no longer matches its approval.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any, cast

from .messages import ToolCallPart

__all__ = ['ApprovalSigner']


class ApprovalSigner:
    """Mints and checks approval ids. `secret` defaults to a random key for this process, so approvals
    do not survive a restart; pass the same secret to every worker to share them."""

    def __init__(self, secret: bytes | str | None = None) -> None:
        if secret is None:
            secret = secrets.token_bytes(32)
        self._key = secret.encode() if isinstance(secret, str) else secret

    def approval_id(self, call: ToolCallPart) -> str:
        canonical = json.dumps(
            [call.tool_call_id, call.tool_name, _as_javascript_sees_it(call.args_as_dict())],
            sort_keys=True,
            separators=(',', ':'),
        )
        digest = hmac.new(self._key, canonical.encode(), hashlib.sha256).hexdigest()[:32]
        return f'apr_{digest}'

    def verify(self, approval_id: str, call: ToolCallPart) -> bool:
        return hmac.compare_digest(approval_id, self.approval_id(call))


def _as_javascript_sees_it(value: Any) -> Any:
    """`value` as it comes back after a trip through a browser's JSON: JavaScript has one number type, so
    `1.0` returns as `1`. Without this an approval for a call with a whole-number float would not verify."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _as_javascript_sees_it(item) for key, item in cast('dict[str, Any]', value).items()}
    if isinstance(value, list):
        return [_as_javascript_sees_it(item) for item in cast('list[Any]', value)]
    return value
