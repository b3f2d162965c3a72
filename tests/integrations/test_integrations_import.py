"""The integrations are optional: importing uibridge, or an integration module itself, imports no vendor SDK."""

from __future__ import annotations

import subprocess
import sys


def test_importing_uibridge_and_the_integration_modules_imports_no_vendor_sdk() -> None:
    code = (
        'import sys, uibridge, uibridge.integrations.openai, uibridge.integrations.anthropic\n'
        "print(sorted(name for name in ('openai', 'anthropic') if name in sys.modules))"
    )
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == '[]'
