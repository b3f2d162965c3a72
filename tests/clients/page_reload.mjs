// page_reload.mjs: the demo page's "Reload" in headless Debian Chromium (playwright-core), against a server
// that keeps the history (store=).
//
// Usage: node page_reload.mjs <base-url> <chromium-executable>
// Over each protocol: a first answer, then a `slow` one; while the slow answer streams, the page is reloaded
// (the Reload button: a real page reload); the page must restore the chat from the server and resume the answer
// in flight. Then it is reloaded once more after the answer ended (nothing left to resume, nothing doubled).
// Then a `state` and a `search` answer, and a reload: the shared state, the provider-run tool, the sources and
// the usage come back from the server; a second `state` answer then counts run 2 (the restored state went back).
// Prints {"<protocol>": {"before": [...], "partialChars", "afterReload": [...], "afterSecondReload": [...],
//   "status", "resumeRequests", "restored": {"state", "providerRun", "sources", "usage"}, "stateAfter"},
//   "pageErrors": [...], "consoleErrors": [...]}
// (a transcript is a list of {role, text} for each message on the page).
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, executablePath] = process.argv.slice(2);
const userDataDir = mkdtempSync(join(tmpdir(), 'uibridge-reload-'));
const result = { pageErrors: [], consoleErrors: [] };
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => result.pageErrors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') result.consoleErrors.push(m.text()); });
  page.setDefaultTimeout(20000);
  const resumes = [];
  page.on('request', (r) => { if (r.url().endsWith('/stream')) resumes.push(r.method() + ' ' + new URL(r.url()).pathname); });
  const transcript = () => page.evaluate(() => [...document.querySelectorAll('#transcript .msg')].map((box) => ({
    role: box.dataset.role,
    text: [...box.querySelectorAll('.text')].map((t) => t.textContent).join(''),
  })));
  const settled = () => page.waitForFunction(() => document.getElementById('status').textContent === 'ready');
  const send = async (text, answer) => {
    await page.fill('#prompt', text);
    await page.click('#send');
    await page.locator('.msg.role-assistant .text', { hasText: answer }).last().waitFor();
    await settled();
  };
  const shownState = async () => {
    const text = await page.locator('#state').textContent();
    try { return JSON.parse(text); } catch { return text; }
  };
  await page.goto(base + '/');
  for (const protocol of ['vercel', 'agui']) {
    const out = (result[protocol] = {});
    await page.check(`input[name=protocol][value=${protocol}]`);
    await page.fill('#prompt', 'hello');
    await page.click('#send');
    await settled();
    await page.fill('#prompt', 'slow');
    await page.click('#send');
    // A few words in, the page goes away mid-answer.
    await page.locator('.msg.role-assistant .text', { hasText: '3,' }).last().waitFor();
    out.partialChars = (await transcript()).at(-1).text.length;
    resumes.length = 0;
    await Promise.all([page.waitForEvent('load'), page.click('#reload')]);
    await page.locator('.msg.role-assistant .text', { hasText: '50.' }).last().waitFor();
    await settled();
    out.afterReload = await transcript();
    out.resumeRequests = [...resumes];
    out.protocolChecked = await page.isChecked(`input[name=protocol][value=${protocol}]`);
    await Promise.all([page.waitForEvent('load'), page.click('#reload')]);
    await settled();
    out.afterSecondReload = await transcript();
    out.status = await page.locator('#status').textContent();

    await send('plan with state', 'Planned run 1:');
    await send('search the web', 'Both protocols stream');
    await Promise.all([page.waitForEvent('load'), page.click('#reload')]);
    await settled();
    out.restored = {
      state: await shownState(),
      providerRun: await page.locator('.tool.provider-run').allTextContents(),
      sources: await page.locator('.sources a').evaluateAll((links) => links.map((a) => a.getAttribute('href'))),
      usage: await page.locator('.usage').allTextContents(),
    };
    await send('plan with state', 'Planned run 2:');
    out.stateAfter = await shownState();
    await page.click('#reset');
  }
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(result) + '\n');
