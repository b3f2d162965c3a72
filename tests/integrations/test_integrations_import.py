"""The integrations are optional: importing uibridge, or an integration module itself, imports no vendor SDK."""

from __future__ import annotations

import sys

import background

# Each check is a fresh interpreter, a job of tests/background.py: started beside the tests before these.
VENDORS_IMPORTED = background.run(
    [
        sys.executable,
        '-c',
        'import sys, uibridge, uibridge.server, uibridge.integrations, uibridge.integrations.openai\n'
        'import uibridge.integrations.anthropic\n'
        "print(sorted(name for name in ('openai', 'anthropic', 'pydantic_ai') if name in sys.modules))",
    ],
    check=True,
    timeout=120,
)
WITHOUT_PYDANTIC_AI = background.run(
    [
        sys.executable,
        '-c',
        'import sys\n'
        'class Block:\n'
        '    def find_spec(self, name, path=None, target=None):\n'
        "        if name == 'pydantic_ai' or name.startswith('pydantic_ai.'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        'sys.meta_path.insert(0, Block())\n'
        'import uibridge.integrations.pydantic_ai\n',
    ],
    timeout=120,
)


def test_importing_uibridge_and_the_integration_modules_imports_no_vendor_sdk() -> None:
    result = VENDORS_IMPORTED.result()
    assert result.stdout.strip() == '[]'


def test_the_pydantic_ai_integration_without_pydantic_ai_says_which_extra_to_install() -> None:
    result = WITHOUT_PYDANTIC_AI.result()
    assert result.returncode != 0
    assert "pip install 'uibridge[pydantic-ai]'" in result.stderr
