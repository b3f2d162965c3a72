"""Sources a model cites: a text part's `citations`, and the sources a UI lists beside an answer.

The shapes are pydantic-ai's stored `Citation` (a list of sources, and optionally where in the text it
anchors), so a stored history's citations load as they are. Vercel's `source-url` / `source-document` parts
are the `WebCitationSource` / `DocumentCitationSource` here (`media_type` and `filename` are the two fields a
Vercel document source has that pydantic-ai's has not).
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Discriminator, Field

__all__ = [
    'Citation',
    'CitationAnchor',
    'CitationSource',
    'ContentCitationAnchor',
    'DocumentCitationSource',
    'MarkerCitationAnchor',
    'WebCitationSource',
]


class _Model(BaseModel):
    model_config = ConfigDict(extra='allow')


class WebCitationSource(_Model):
    url: str
    title: str | None = None
    excerpts: list[str] = Field(default_factory=list[str])
    id: str | None = None
    """The UI's id for this source (Vercel `sourceId`), when it has one."""
    kind: Literal['web'] = 'web'


class DocumentCitationSource(_Model):
    document_id: str | None = None
    title: str | None = None
    excerpts: list[str] = Field(default_factory=list[str])
    media_type: str | None = None
    filename: str | None = None
    id: str | None = None
    """The UI's id for this source (Vercel `sourceId`), when it has one."""
    kind: Literal['document'] = 'document'


CitationSource: TypeAlias = Annotated[WebCitationSource | DocumentCitationSource, Discriminator('kind')]


class ContentCitationAnchor(_Model):
    """The cited span of the text part's content, as `[start, end)` character offsets."""

    start: int
    end: int
    kind: Literal['content'] = 'content'


class MarkerCitationAnchor(_Model):
    """Where a citation marker sits in the text part's content, as `[start, end)` character offsets."""

    start: int
    end: int
    kind: Literal['marker'] = 'marker'


CitationAnchor: TypeAlias = Annotated[ContentCitationAnchor | MarkerCitationAnchor, Discriminator('kind')]


class Citation(_Model):
    sources: list[CitationSource]
    anchor: CitationAnchor | None = None
