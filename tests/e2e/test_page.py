"""The demo page in headless Chromium: it talks to both endpoints, renders what it gets alike in both, fits a
desktop and a phone screen, and stays on loopback."""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path
from typing import Any

import pytest
from e2e_support import LiveServer, run_node

CHROMIUM = Path('/usr/bin/chromium')
SIZES = {'1280x900': (1280, 900), '390x844': (390, 844)}


@pytest.fixture(scope='module')
def page_run(live_server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One drive of the page over both protocols (`tests/clients/page_demo.mjs`), its screenshots in
    `result['screenshots']`, and the server's warnings about the history the page sent back."""
    if not CHROMIUM.exists():
        if os.environ.get('CI'):  # CI installs it (.ci/run): there, a missing browser is a failure, not a skip
            pytest.fail(f'{CHROMIUM} is missing')
        pytest.skip(f'{CHROMIUM} is not installed (apt-get install chromium; CI installs it)')
    screenshots = tmp_path_factory.mktemp('page-screenshots')
    handler = _Collect()
    server_log = logging.getLogger('uibridge.server')
    server_log.addHandler(handler)
    try:
        result = run_node(
            'page_demo.mjs', args=[live_server.base_url, str(CHROMIUM), str(screenshots)], own_process=True
        )
    finally:
        server_log.removeHandler(handler)
    result['screenshots'] = screenshots
    result['serverWarnings'] = handler.messages
    return result


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_the_page_stays_on_loopback_without_errors(page_run: dict[str, Any]) -> None:
    assert page_run['probeBlocked']  # the interception does catch off-loopback requests ...
    assert page_run['blocked'] == []  # ... and the page made none
    assert page_run['pageErrors'] == []
    assert page_run['consoleErrors'] == []
    assert page_run['favicon'] == {'status': 200, 'type': 'image/svg+xml'}


def test_the_server_believes_the_history_the_page_sends_back(page_run: dict[str, Any]) -> None:
    # The page keeps the signatures the stream sent (metadata on AG-UI's END events, providerMetadata on
    # Vercel's chunks) and echoes them: nothing it sends back is dropped as unverifiable.
    assert [m for m in page_run['serverWarnings'] if 'does not verify' in m] == []


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
def test_the_page_chats_over_both_protocols(page_run: dict[str, Any], protocol: str) -> None:
    checks = page_run['checks'][protocol]
    assert checks['answer'] == 'It is sunny in Paris, 21 °C.'
    assert checks['userShown'] == 1
    assert checks['reasoning'] == 1
    # Vercel shows a call and its output as one tool part; AG-UI as the call and its tool message.
    assert checks['tools'] == {'vercel': 1, 'agui': 2}[protocol]
    assert checks['rawHasStream']
    assert checks['feedback'] == 3
    assert checks['clientTool'].startswith('Your browser answered: get_local_time says')
    assert checks['approved']


def test_retry_feedback_reads_the_same_in_both_protocols(page_run: dict[str, Any]) -> None:
    vercel, agui = (page_run['checks'][p]['feedbackTexts'] for p in ('vercel', 'agui'))
    assert vercel == agui  # rendered from the marker each protocol carries, not from the framed text
    assert vercel == [
        'failed validation: Invalid JSON: expected value at line 1 column 12',
        'no usable output',
        'rejected by a validator: The answer must be 42, not 41. The question was: feedback',
    ]


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
def test_denied_and_retried_calls_look_failed(page_run: dict[str, Any], protocol: str) -> None:
    checks = page_run['checks'][protocol]
    assert checks['failedAfterApproval'] == 0  # an approved call that ran is a success
    # One box per call on Vercel; on AG-UI the call and its tool message both.
    boxes = {'vercel': 1, 'agui': 2}[protocol]
    assert len(checks['deniedFailed']) == boxes
    assert all('denied' in text for text in checks['deniedFailed'])
    assert len(checks['retriedFailed']) == boxes
    retried = {'vercel': '[output-error]', 'agui': ': retry]'}[protocol]
    assert all(retried in text for text in checks['retriedFailed'])


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
def test_an_error_says_error(page_run: dict[str, Any], protocol: str) -> None:
    checks = page_run['checks'][protocol]
    assert checks['statusAfterError'] == 'error'
    assert checks['statusMarked'] == 1
    assert checks['error'] == 1


PLANNED = {'city': 'Lyon', 'train': '08:12', 'hotel': 'Hôtel du Parc'}
STEPS = ['pick a city', 'book a train', 'find a hotel']
SOURCES = [
    {'href': 'https://example.com/vercel-ai', 'title': 'Vercel AI SDK: the UI message stream'},
    {'href': 'https://example.com/ag-ui', 'title': 'AG-UI: events between agents and UIs'},
]


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
def test_the_state_panel_follows_the_shared_state_and_sends_it_back(page_run: dict[str, Any], protocol: str) -> None:
    checks = page_run['checks'][protocol]
    assert checks['stateBefore'].startswith('No shared state yet')
    done = [{'step': step, 'done': True} for step in STEPS]
    # The second run counted on from the first: the page sent the state back (AG-UI: RunAgentInput.state;
    # Vercel: the data-state part in the history).
    assert checks['states'] == [{'runs': runs, 'plan': done, **PLANNED} for runs in (1, 2)]
    # Live: the panel showed the plan as the run started, then each step's change as it came (each render shows
    # the state again: the previous run's until this run's snapshot).
    for runs, shown in zip((1, 2), checks['statesShown'], strict=True):
        states = [state for state in shown if isinstance(state, dict) and state['runs'] == runs]
        distinct = [state for i, state in enumerate(states) if i == 0 or state != states[i - 1]]
        assert [[item['done'] for item in state['plan']] for state in distinct] == [
            [False, False, False],
            [True, False, False],
            [True, True, False],
            [True, True, True],
        ]
        assert shown[-1] == checks['states'][runs - 1]
    # AG-UI names the steps; Vercel's stream carries none.
    assert checks['steps'] == {'vercel': None, 'agui': ' · '.join(f'✓ {step}' for step in STEPS)}[protocol]


def test_the_page_applies_json_patches_as_rfc_6902_says(page_run: dict[str, Any]) -> None:
    # AG-UI's STATE_DELTA is applied by the page itself: all six operations, pointer escapes, '-', and a patch
    # that fails anywhere changes nothing (null here).
    patches = page_run['patches']
    assert len(patches) >= 18
    assert [case['got'] for case in patches] == [case['want'] for case in patches]


@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
def test_a_search_shows_the_provider_run_tool_and_the_cited_sources(page_run: dict[str, Any], protocol: str) -> None:
    checks = page_run['checks'][protocol]
    [box] = checks['providerRun']  # one box for the call and its result, in both protocols
    assert box.startswith('web_searchprovider-run')
    assert 'input: {"query":' in box and '"search the web"}' in box
    assert all(f'"url":"{source["href"]}"' in box.split('output: ', 1)[1] for source in SOURCES)
    assert checks['sources'] == SOURCES  # listed under the answer that cites them, each title linking its url


def test_each_answer_shows_its_usage_alike_in_both_protocols(page_run: dict[str, Any]) -> None:
    vercel, agui = (page_run['checks'][p] for p in ('vercel', 'agui'))
    # A word is a token in the demo: 'plan with state' is 3 in; the answers are 10 and 15 words out.
    for checks in (vercel, agui):
        assert checks['stateUsage'] == '3 in / 10 out tokens'
        assert checks['searchUsage'] == '3 in / 15 out tokens'
    # Vercel's message total and AG-UI's RUN_FINISHED.usage (added up over a turn) agree on every answer.
    assert vercel['usage'] == agui['usage']
    assert len(vercel['usage']) >= 8


@pytest.mark.parametrize('size', list(SIZES))
@pytest.mark.parametrize('protocol', ['vercel', 'agui'])
def test_the_page_fits_a_desktop_and_a_phone(page_run: dict[str, Any], protocol: str, size: str) -> None:
    layout = page_run['layout'][protocol][size]
    assert layout['scrollWidth'] <= layout['innerWidth']  # no sideways scrolling
    assert layout['scrollHeight'] <= layout['innerHeight']  # the panes scroll, never the page
    assert layout['composerVisible']
    assert layout['transcriptHeight'] >= 200  # room to read the conversation
    shot = page_run['screenshots'] / f'{protocol}-{size}.png'
    assert _png_size(shot.read_bytes()) == SIZES[size]


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b'\x89PNG\r\n\x1a\n' and data[12:16] == b'IHDR'
    width, height = struct.unpack('>II', data[16:24])
    return width, height
