"""What `load.py` gathers over one step before the response it becomes is complete: the sources its text parts
cite (a source part comes after its text part, perhaps after other parts) and native tool returns that sat
further on in the response than right after their call.
"""

from __future__ import annotations

from typing import Any

from ...core.messages import ModelResponse, NativeToolReturnPart, TextPart
from ...core.verification import SignatureClaims
from ._load_parts import result_fields
from ._native_tools import native_call, native_return
from ._provider_metadata import SIG_KEY
from ._sources import CitedSource, with_citations
from .types import DynamicToolUIPart, ToolUIPart


class Step:
    # A plain class with slots: the loader makes one per response, and a dataclass's factories cost more.
    __slots__ = ('later', 'sources', 'texts')

    def __init__(self) -> None:
        self.texts: list[tuple[int, Any]] = []
        """Each text part of the step: its slot in the response, and the signature it came with."""
        self.sources: dict[int, list[CitedSource]] = {}
        """The sources cited, by the index of the citing text part among `texts`."""
        self.later: list[tuple[int, NativeToolReturnPart]] = []
        """Native returns that sat further on than right after their call, with their position."""

    def cite(self, cited: CitedSource) -> None:
        """A source of the text part it names, else of the nearest text part before it."""
        text = cited.text if cited.text is not None and cited.text < len(self.texts) else len(self.texts) - 1
        self.sources.setdefault(text, []).append(cited)

    def add_native(
        self,
        response: ModelResponse,
        part: ToolUIPart | DynamicToolUIPart,
        call_fields: dict[str, Any],
        claims: SignatureClaims,
        extras: tuple[dict[str, Any], dict[str, Any]] | None = None,
    ) -> None:
        """A provider-executed call and its return, both in the response (see `_native_tools`); `extras`: the
        extra keys of each, for a part pydantic-ai stored (`_peer_history`)."""
        call = native_call(part, call_fields)
        if extras is not None and extras[0]:
            call = call.model_copy(update=extras[0])
        claims.add(call, call_fields.get(SIG_KEY))
        response.parts.append(call)
        fields = result_fields(part, call_fields)  # an `ai` 5 client keeps it under the call's `result`
        returned = native_return(part, fields)
        if returned is None:
            return
        if extras is not None and extras[1]:
            returned = returned.model_copy(update=extras[1])
        claims.add(returned, fields.get(SIG_KEY))
        position = fields.get('position')
        if isinstance(position, int) and position > len(response.parts):
            self.later.append((position, returned))
        else:
            response.parts.append(returned)

    def finish(self, response: ModelResponse, claims: SignatureClaims) -> None:
        """Put the step's citations on their text parts (signed, if at all, by the last source sent with a
        signature, else by the text's own) and its later returns in their places."""
        for text, cited in self.sources.items():
            slot, own = self.texts[text]
            part = response.parts[slot]
            assert isinstance(part, TextPart)
            cited_part = with_citations(part, cited)
            sigs = [item.sig for item in cited if isinstance(item.sig, str)]
            claims.add(cited_part, sigs[-1] if sigs else own)
            response.parts[slot] = cited_part
        for position, returned in sorted(self.later, key=lambda item: item[0]):
            response.parts.insert(min(position, len(response.parts)), returned)
