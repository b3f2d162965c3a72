"""Real model streams and agents as uibridge runs: optional extras, one mapping module each.

- `uibridge.integrations.openai` (`pip install 'uibridge[openai]'`): Chat Completions and Responses streams
  → agent events; neutral history → their input.
- `uibridge.integrations.anthropic` (`pip install 'uibridge[anthropic]'`): Messages API streams → agent
  events; neutral history → Messages input.
- `uibridge.integrations.pydantic_ai` (`pip install 'uibridge[pydantic-ai]'`): a pydantic-ai `Agent` as an
  agent both endpoints serve (`PydanticAIAgent`); histories both ways.

Nothing here is imported by `import uibridge`, and this package imports none of its modules: each is
imported by name, so a vendor SDK is only needed by the application that uses it.
"""
