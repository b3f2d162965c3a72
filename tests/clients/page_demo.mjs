// page_demo.mjs: the demo page at `/` in headless Debian Chromium, driven by playwright-core.
//
// Usage: node page_demo.mjs <base-url> <chromium-executable>
// Sends messages over both protocols, waits for each answer to render, answers an approval and a client
// tool, and records every request the page makes: anything not on loopback is blocked and reported.
// Prints one JSON document: {"checks": {...}, "blocked": [...], "probeBlocked", "pageErrors", "consoleErrors"}.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, executablePath] = process.argv.slice(2);
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const userDataDir = mkdtempSync(join(tmpdir(), 'uibridge-page-'));
const result = { checks: {}, blocked: [], pageErrors: [], consoleErrors: [] };

const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
});
try {
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.has(url.hostname)) return route.continue();
    if (url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
    result.blocked.push(route.request().url());
    return route.abort();
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => result.pageErrors.push(String(e)));
  const onConsole = (m) => { if (m.type() === 'error') result.consoleErrors.push(m.text()); };
  page.on('console', onConsole);
  page.setDefaultTimeout(15000);
  await page.goto(base + '/');

  const send = async (text) => {
    await page.fill('#prompt', text);
    await page.click('#send');
  };
  const last = (selector) => page.locator(selector).last();
  const settled = () => page.waitForFunction(() => document.getElementById('status').textContent === 'ready');

  for (const protocol of ['vercel', 'agui']) {
    await page.check(`input[name=protocol][value=${protocol}]`);
    const checks = (result.checks[protocol] = {});

    await send('think about the weather');
    await page.locator('.msg.role-assistant .text', { hasText: 'sunny in Paris' }).last().waitFor();
    await settled();
    checks.answer = await last('.msg.role-assistant .text').textContent();
    checks.reasoning = await page.locator('.reasoning').count();
    checks.tools = await page.locator('.tool').count();
    checks.userShown = await page.locator('.msg.role-user', { hasText: 'think about the weather' }).count();
    checks.rawHasStream = (await page.locator('#raw').textContent()).includes(
      protocol === 'vercel' ? '"type":"text-delta"' : '"type":"TEXT_MESSAGE_CONTENT"',
    );

    await send('feedback');
    await page.locator('.text', { hasText: '{"answer": 42}' }).last().waitFor();
    await settled();
    checks.feedback = await page.locator('.feedback').count();

    await send('client');
    await page.locator('.text', { hasText: 'Your browser answered' }).last().waitFor();
    await settled();
    checks.clientTool = await last('.text').textContent();

    await send('delete');
    await page.locator('button.approve').last().waitFor();
    await page.locator('button.approve').last().click();
    await page.locator('.text', { hasText: 'I deleted notes.txt.' }).last().waitFor();
    await settled();
    checks.approved = true;
    checks.error = await page.locator('.error-banner').count();
  }

  // Proof that the interception works: a request off loopback is caught (and then not counted).
  page.off('console', onConsole); // the failed probe logs a console error of its own
  const probe = 'http://192.0.2.1/probe';
  await page.evaluate((url) => fetch(url).catch(() => null), probe);
  result.probeBlocked = result.blocked.includes(probe);
  result.blocked = result.blocked.filter((url) => url !== probe);
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(result) + '\n');
