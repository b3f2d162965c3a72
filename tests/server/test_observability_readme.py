"""README's "Observability" set-up, run as it is written (read from the README, so the two cannot drift): the
app answers a chat turn, and the console exporters print its spans and metrics, the log its run record."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / 'README.md').read_text(encoding='utf-8')

ASK = """
import asyncio
import httpx
from app import app

async def ask() -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url='http://test') as client:
        message = {'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}
        body = {'id': 'readme-chat', 'messages': [message]}
        answer = await client.post('/api/chat', json=body, headers={'x-request-id': 'readme-1'})
        assert answer.status_code == 200 and answer.headers['x-request-id'] == 'readme-1'

asyncio.run(ask())
"""


def readme_block(name: str) -> str:
    found = re.search(rf'<!-- observability: {re.escape(name)}\b[^>]*-->\n```python\n(.*?)\n```', README, re.DOTALL)
    assert found, f'README has no observability block {name!r}'
    return found.group(1) + '\n'


def test_the_readme_set_up_prints_the_spans_metrics_and_run_record(tmp_path: Path) -> None:
    (tmp_path / 'app.py').write_text(readme_block('app.py'), encoding='utf-8')
    done = subprocess.run(
        [sys.executable, '-c', ASK], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # The console exporters write when the providers shut down, as the process exits.
    spans = [json.loads(block) for block in re.findall(r'^\{\n.*?^\}$', done.stdout, re.DOTALL | re.MULTILINE)]
    named = {span.get('name'): span for span in spans if 'name' in span and 'context' in span}
    assert {'POST vercel-ai', 'invoke_agent DemoAgent'} <= set(named)
    run = named['invoke_agent DemoAgent']
    assert run['attributes']['gen_ai.conversation.id'] == 'readme-chat'
    assert run['resource']['attributes']['service.name'] == 'chat'
    assert run['parent_id'] == named['POST vercel-ai']['context']['span_id']
    assert '"gen_ai.client.operation.duration"' in done.stdout and '"gen_ai.client.token.usage"' in done.stdout
    assert "INFO:uibridge.server:vercel-ai run '" in done.stderr
    assert "on chat 'readme-chat' finished in " in done.stderr and '[request readme-1]' in done.stderr
