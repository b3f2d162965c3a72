"""Write docs/api.md, the listing of uibridge's public names, from the `__all__` of each public module.

    .venv/bin/python docs/api_listing.py

`tests/test_public_face.py` renders the listing again and fails when docs/api.md differs, so the file cannot
drift from the code: change a public name or its docstring, run this, commit both.

`PUBLIC_MODULES` is the whole public surface, module by module: a module is public when users import from it
(a package, or a module the README and docs/ send them to), and every name it lists in `__all__` is public.
Every other module is the library's own workings and has no `__all__` (the test checks that too).
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

PUBLIC_MODULES = (
    'uibridge',
    'uibridge.core.messages',
    'uibridge.core.events',
    'uibridge.core.content',
    'uibridge.core.citations',
    'uibridge.core.usage',
    'uibridge.core.framing',
    'uibridge.core.run',
    'uibridge.adapters.vercel_ai',
    'uibridge.adapters.vercel_ai.types',
    'uibridge.adapters.vercel_ai.chunks',
    'uibridge.adapters.vercel_ai.decode',
    'uibridge.adapters.ag_ui',
    'uibridge.adapters.ag_ui.decode',
    'uibridge.server',
    'uibridge.server.auth',
    'uibridge.server.limits',
    'uibridge.server.approvals',
    'uibridge.server.demo',
    'uibridge.server.store',
    'uibridge.server.store.base',
    'uibridge.server.store.postgres',
    'uibridge.server.store.redis',
    'uibridge.client',
    'uibridge.bridge',
    'uibridge.integrations.openai',
    'uibridge.integrations.anthropic',
    'uibridge.integrations.pydantic_ai',
)

API_MD = Path(__file__).resolve().parent / 'api.md'

HEADER = """\
# API listing

Every public name of uibridge, module by module, with the first sentence of its docstring. Generated from each
public module's `__all__` by `docs/api_listing.py` (`.venv/bin/python docs/api_listing.py`); a test fails when
this file and the code disagree, so edit the code and run the script, not this file.

Most applications need three imports: `uibridge` (the neutral model, the events, framing, signing and
sanitizing), one protocol package (`uibridge.adapters.vercel_ai`, `uibridge.adapters.ag_ui`) or the endpoints
(`uibridge.server`), and, for a real agent, an integration (`uibridge.integrations.*`). A module not listed here
is the library's own workings: import nothing from it, it may change without notice.
"""


def _summary(text: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    if not text:
        return ''
    paragraph = ' '.join(line.strip() for line in inspect.cleandoc(text).split('\n\n')[0].splitlines())
    sentence = re.match(r'(.+?[.!?])(?:\s|$)', paragraph)
    return (sentence.group(1) if sentence else paragraph).replace('|', '\\|')


def _kind(value: Any) -> str:
    if inspect.isclass(value):
        return 'exception' if issubclass(value, BaseException) else 'class'
    if inspect.isfunction(value) or inspect.isbuiltin(value):
        return 'function'
    if isinstance(value, str | int | float | bytes | frozenset | tuple):
        return 'constant'
    if type(value).__module__ in ('typing', 'types', 'typing_extensions', 'collections.abc'):
        return 'type'  # an alias: a union, `Literal`, `Annotated`
    return 'object'


def _doc(name: str, value: Any) -> str:
    """The docstring uibridge wrote for `value` (a short constant's value instead): none for a value of another
    library's class (its class's docstring says nothing of this value), nor the signature a dataclass writes
    when it has none."""
    if isinstance(value, str | int | float) and len(repr(value)) <= 60:
        return f'`{value!r}`'.replace('|', '\\|')
    if not (inspect.isclass(value) or inspect.isfunction(value)):
        return ''
    if not getattr(value, '__module__', '').startswith('uibridge'):
        return ''
    doc = value.__doc__
    if doc is None or doc.startswith(f'{name}('):
        return ''
    return _summary(doc)


def render() -> str:
    sections = [HEADER]
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        names: list[str] = list(module.__all__)
        rows = ['| name | kind | what it is |', '|---|---|---|']
        for name in sorted(names, key=lambda name: (name.lower(), name)):
            value = getattr(module, name)
            rows.append(f'| `{name}` | {_kind(value)} | {_doc(name, value)} |')
        sections.append(f'## `{module_name}`\n\n{_summary(module.__doc__)}\n\n' + '\n'.join(rows) + '\n')
    return '\n'.join(sections)


def main() -> int:
    API_MD.write_text(render(), encoding='utf-8')
    print(f'wrote {API_MD}', file=sys.stderr)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
