"""The Vercel AI SDK adapter (`useChat`, `ai` 5 to 7): UI messages, the UI message stream, request parsing."""

from .chunks import UIMessageChunk, UIMessageChunkAdapter
from .types import UIMessage, UIMessagePart

__all__ = ['UIMessage', 'UIMessageChunk', 'UIMessageChunkAdapter', 'UIMessagePart']
