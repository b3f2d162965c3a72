"""The demo page in headless Chromium: it talks to both endpoints, renders what it gets, stays on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import LiveServer, run_node

CHROMIUM = Path('/usr/bin/chromium')


def test_the_page_chats_over_both_protocols_without_leaving_loopback(live_server: LiveServer) -> None:
    if not CHROMIUM.exists():
        pytest.skip(f'{CHROMIUM} is not installed (apt-get install chromium; CI installs it)')
    result = run_node('page_demo.mjs', args=[live_server.base_url, str(CHROMIUM)])
    assert result['probeBlocked']  # the interception does catch off-loopback requests ...
    assert result['blocked'] == []  # ... and the page made none
    assert result['pageErrors'] == []
    assert result['consoleErrors'] == []
    for protocol in ('vercel', 'agui'):
        checks = result['checks'][protocol]
        assert checks['answer'] == 'It is sunny in Paris, 21 °C.'
        assert checks['userShown'] == 1
        assert checks['reasoning'] == 1
        # Vercel shows a call and its output as one tool part; AG-UI as the call and its tool message.
        assert checks['tools'] == {'vercel': 1, 'agui': 2}[protocol]
        assert checks['rawHasStream']
        assert checks['feedback'] == 3
        assert checks['clientTool'].startswith('Your browser answered: get_local_time says')
        assert checks['approved']
        assert checks['error'] == 0
