// page_demo.mjs: the demo page at `/` in headless Debian Chromium, driven by playwright-core.
//
// Usage: node page_demo.mjs <base-url> <chromium-executable> <screenshot-dir>
// Over each protocol: sends messages, waits for each answer to render, answers a client tool, approves one call
// and denies another, has a tool call retried and the agent fail; then measures the layout at a desktop and a
// phone size and screenshots both (<screenshot-dir>/<protocol>-<width>x<height>.png). Records every request the
// page makes: anything not on loopback is blocked and reported.
// Prints one JSON document: {"checks": {...}, "layout": {...}, "favicon", "blocked": [...], "probeBlocked",
// "pageErrors", "consoleErrors"}.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, executablePath, screenshots] = process.argv.slice(2);
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const VIEWPORTS = [{ width: 1280, height: 900 }, { width: 390, height: 844 }];
const userDataDir = mkdtempSync(join(tmpdir(), 'uibridge-page-'));
const result = { checks: {}, layout: {}, blocked: [], pageErrors: [], consoleErrors: [] };

const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  viewport: VIEWPORTS[0],
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

  // The icon the page links, fetched as the browser would.
  result.favicon = await page.evaluate(async () => {
    const link = document.querySelector('link[rel=icon]');
    if (!link) return null;
    const response = await fetch(link.href);
    return { status: response.status, type: response.headers.get('content-type') };
  });

  const send = async (text) => {
    await page.fill('#prompt', text);
    await page.click('#send');
  };
  const last = (selector) => page.locator(selector).last();
  const status = () => page.locator('#status').textContent();
  const settled = (text = 'ready') =>
    page.waitForFunction((want) => document.getElementById('status').textContent === want, text);
  const texts = (selector) => page.locator(selector).allTextContents();
  const layout = () => page.evaluate(() => {
    const inside = (id) => {
      const box = document.getElementById(id).getBoundingClientRect();
      return box.left >= 0 && box.top >= 0 && box.right <= innerWidth && box.bottom <= innerHeight;
    };
    return {
      scrollWidth: document.scrollingElement.scrollWidth, innerWidth,
      scrollHeight: document.scrollingElement.scrollHeight, innerHeight,
      // Usable: what you type into, the button that sends it and the newest message are all on screen.
      composerVisible: inside('prompt') && inside('send'),
      transcriptHeight: document.getElementById('transcript').getBoundingClientRect().height,
    };
  });

  for (const protocol of ['vercel', 'agui']) {
    await page.setViewportSize(VIEWPORTS[0]);
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
    checks.feedbackTexts = await texts('.feedback');

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
    checks.failedAfterApproval = await page.locator('.tool.failed').count();

    await send('delete');
    await page.locator('button.deny').last().waitFor();
    await page.locator('button.deny').last().click();
    await page.locator('.text', { hasText: 'Understood, I left it alone.' }).last().waitFor();
    await settled();
    checks.deniedFailed = await texts('.tool.failed');

    await send('retry the weather');
    await page.locator('.msg.role-assistant .text', { hasText: 'sunny in Paris' }).nth(1).waitFor();
    await settled();
    checks.retriedFailed = (await texts('.tool.failed')).slice(checks.deniedFailed.length);

    await send('error');
    await page.locator('.error-banner').waitFor();
    await settled('error');
    checks.statusAfterError = await status();
    checks.error = await page.locator('.error-banner').count();
    checks.statusMarked = await page.locator('#status[data-state=error]').count();

    // The longest transcript of the run, at each size: nothing sticks out of the page, the composer is there.
    result.layout[protocol] = {};
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      const size = `${viewport.width}x${viewport.height}`;
      result.layout[protocol][size] = await layout();
      await page.screenshot({ path: join(screenshots, `${protocol}-${size}.png`) });
    }
    await page.click('#reset');
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
