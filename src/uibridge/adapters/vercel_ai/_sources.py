"""A text part's citations as Vercel `source-url` / `source-document` parts, and back.

Each source of each citation is one source part, right after the text part that cites it (the stream sends
them right after `text-end`, or when a `CitationAdded` comes after that). The UI part has fields for a source's
url, title, media type and filename; the rest rides in `providerMetadata.uibridge`:

- `text`: which of the step's text parts cites it (its index among them), so a source sent late, after other
  parts, still finds its text; `citation`: the citation's index in that part's `citations`, which groups the
  sources of one citation; `anchor`: the citation's anchor, and `citation_fields`: its other keys (a provider's
  own citation object, `provider_name` / `provider_details`), on its first source;
- `source`: the source's other fields (`excerpts`, `document_id`, the keys a stored history adds), and a
  document's `title` / `media_type` when it has none (the UI part needs a string there);
- `sig`: only on a source sent after its text part ended: the cited text's signature with this citation (the
  `text-end` the client holds signed the citations known then). A text part's citations are signed with it
  (`core.provenance`, domain `text/cited`), so a source a client adds, drops from the middle or edits makes
  the text fail to verify; a source part that cites nothing (no text part before it in its step) stays UI-only.

`sourceId` is the source's own `id`, else one derived from its content (so a dump is stable), which loading
recognises and leaves out again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, cast

import pydantic

from ...core.citations import Citation, CitationSource, DocumentCitationSource, WebCitationSource
from ...core.factories import new_dict
from ...core.json_text import compact_json
from ...core.messages import TextPart
from ...core.trusted import replace
from ._provider_metadata import PROVIDER_KEY, SIG_KEY
from .types import SourceDocumentUIPart, SourceUrlUIPart

SourceUIPart = SourceUrlUIPart | SourceDocumentUIPart

_ON_THE_PART = {
    'web': frozenset({'url', 'title', 'id', 'kind'}),
    'document': frozenset({'title', 'media_type', 'filename', 'id', 'kind'}),
}
_NO_MEDIA_TYPE = 'application/octet-stream'
_source = pydantic.TypeAdapter[CitationSource](CitationSource)


def _derived_id(data: dict[str, Any]) -> str:
    return 'src_' + hashlib.sha256(compact_json(data).encode()).hexdigest()[:16]


def _source_fields(source: WebCitationSource | DocumentCitationSource) -> tuple[dict[str, Any], dict[str, Any]]:
    """The source's JSON without its id, and what of it the UI part has no field for."""
    data = source.model_dump(mode='json', exclude={'id'})
    rest = {key: value for key, value in data.items() if key not in _ON_THE_PART[source.kind]}
    if not rest.get('excerpts'):
        rest.pop('excerpts', None)
    if rest.get('document_id', 0) is None:
        del rest['document_id']
    if isinstance(source, DocumentCitationSource):
        if source.title is None:
            rest['title'] = None
        if source.media_type is None:
            rest['media_type'] = None
    return data, rest


def source_parts(part: TextPart, text_index: int, start: int = 0, sig: str | None = None) -> list[SourceUIPart]:
    """The source parts for `part.citations[start:]`, `part` being the step's `text_index`-th text part."""
    parts: list[SourceUIPart] = []
    for number, citation in enumerate((part.citations or [])[start:], start):
        for position, source in enumerate(citation.sources):
            fields: dict[str, Any] = {'text': text_index, 'citation': number}
            if position == 0 and citation.anchor is not None:
                fields['anchor'] = citation.anchor.model_dump(mode='json')
            if position == 0 and citation.model_extra:
                fields['citation_fields'] = citation.model_dump(mode='json', include=set(citation.model_extra))
            data, rest = _source_fields(source)
            if rest:
                fields['source'] = rest
            if sig is not None:
                fields[SIG_KEY] = sig
            source_id = source.id if source.id is not None else _derived_id(data)
            metadata = {PROVIDER_KEY: fields}
            if isinstance(source, WebCitationSource):
                parts.append(
                    SourceUrlUIPart(source_id=source_id, url=source.url, title=source.title, provider_metadata=metadata)
                )
            else:
                parts.append(
                    SourceDocumentUIPart(
                        source_id=source_id,
                        media_type=source.media_type or _NO_MEDIA_TYPE,
                        title=source.title if source.title is not None else '',
                        filename=source.filename,
                        provider_metadata=metadata,
                    )
                )
    return parts


@dataclass
class CitedSource:
    """A source part read back: which text part it cites (`None`: the nearest before it), in which citation."""

    source: WebCitationSource | DocumentCitationSource
    text: int | None
    citation: int | None
    anchor: Any = None
    sig: Any = None
    extra: dict[str, Any] = field(default_factory=new_dict)


def read_source(part: SourceUIPart, fields: dict[str, Any]) -> CitedSource:
    """The source a UI part holds; `fields` is its `uibridge` metadata (client input: checked, else ignored)."""
    rest = fields.get('source')
    kept: dict[str, Any] = cast('dict[str, Any]', rest) if isinstance(rest, dict) else {}
    bare: dict[str, Any]
    if isinstance(part, SourceUrlUIPart):
        bare = {'kind': 'web', 'url': part.url, 'title': part.title}
        data = {**kept, **bare}
    else:
        bare = {'kind': 'document', 'title': part.title, 'media_type': part.media_type, 'filename': part.filename}
        data = {**bare, **kept, 'kind': 'document'}  # a document's missing title and media type are kept as such
    try:
        source = _source.validate_python(data)
    except pydantic.ValidationError:
        source = _source.validate_python(bare)
    if part.source_id != _derived_id(_source_fields(source)[0]):
        source = replace(source, {'id': part.source_id})
    text, number = fields.get('text'), fields.get('citation')
    return CitedSource(
        source,
        text if isinstance(text, int) and text >= 0 else None,
        number if isinstance(number, int) and number >= 0 else None,
        fields.get('anchor'),
        fields.get(SIG_KEY),
        cast('dict[str, Any]', extra) if isinstance(extra := fields.get('citation_fields'), dict) else {},
    )


def with_citations(part: TextPart, cited: list[CitedSource]) -> TextPart:
    """`part` citing `cited`: grouped into citations by their index (one each without one), in that order."""
    groups: dict[int, list[CitedSource]] = {}
    loose: list[list[CitedSource]] = []
    for item in cited:
        if item.citation is None:
            loose.append([item])
        else:
            groups.setdefault(item.citation, []).append(item)
    citations: list[Citation] = [*(part.citations or [])]
    for group in [groups[number] for number in sorted(groups)] + loose:
        anchor = group[0].anchor
        values: dict[str, Any] = {**group[0].extra, 'sources': [item.source for item in group]}
        if isinstance(anchor, dict):
            values['anchor'] = anchor
        try:
            citations.append(Citation.model_validate(values))
        except pydantic.ValidationError:
            citations.append(Citation(sources=values['sources']))
    return replace(part, {'citations': citations})
