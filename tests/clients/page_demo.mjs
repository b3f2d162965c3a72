// page_demo.mjs: the demo page at `/` in headless Debian Chromium, driven by playwright-core.
//
// Usage: node page_demo.mjs <base-url> <chromium-executable> <screenshot-dir>
// Over each protocol: sends messages, waits for each answer to render, answers a client tool, approves one call
// and denies another, has a tool call retried, plans with shared state twice (the state panel, live and sent
// back), searches (a provider-run tool and cited sources), reads each answer's usage, and has the agent fail;
// then measures the layout at a desktop and a phone size and screenshots both (<screenshot-dir>/<protocol>-<width>x<height>.png). Records every request the
// page makes: anything not on loopback is blocked and reported.
// Also runs the page's JSON Patch on a list of cases, in the page.
// Prints one JSON document: {"checks": {...}, "layout": {...}, "favicon", "patches": [{got, want}], "blocked": [...],
// "probeBlocked", "pageErrors", "consoleErrors"}.
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

  // The page's own JSON Patch (AG-UI's STATE_DELTA), on RFC 6902's examples (appendix A) and a few more: each
  // case is [doc, patch, the result, or null when the patch must fail and change nothing].
  const PATCHES = [
    [{ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }], { foo: 'bar', baz: 'qux' }],
    [{ foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }], { foo: ['bar', 'qux', 'baz'] }],
    [{ baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' }],
    [{ foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }], { foo: ['bar', 'baz'] }],
    [{ baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }], { baz: 'boo', foo: 'bar' }],
    [{ foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } }],
    [{ foo: ['all', 'grass', 'cows', 'eat'] }, [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
      { foo: ['all', 'cows', 'eat', 'grass'] }],
    [{ baz: 'qux', foo: ['a', 2, 'c'] }, [{ op: 'test', path: '/baz', value: 'qux' }, { op: 'test', path: '/foo/1', value: 2 }],
      { baz: 'qux', foo: ['a', 2, 'c'] }],
    [{ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }], null],
    [{ foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }], { foo: 'bar', child: { grandchild: {} } }],
    [{ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }], null],
    [{ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }, { op: 'copy', from: '/~1', path: '/a~1b' }],
      { '/': 9, '~1': 10, 'a/b': 9 }],
    [{ foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }], { foo: ['bar', ['abc', 'def']] }],
    [{ a: { b: 1, c: [1, 2] } }, [{ op: 'test', path: '/a', value: { c: [1, 2], b: 1 } }], { a: { b: 1, c: [1, 2] } }],
    [{ foo: 1 }, [{ op: 'replace', path: '', value: [1] }], [1]],
    [{ foo: 1 }, [{ op: 'replace', path: '/bar', value: 2 }], null],
    [{ foo: [1] }, [{ op: 'remove', path: '/foo/1' }], null],
    [{ foo: 1 }, [{ op: 'add', path: '/bar', value: 2 }, { op: 'test', path: '/foo', value: 2 }], null],
  ];
  result.patches = await page.evaluate((cases) => cases.map(([doc, patch, want]) => {
    let got = null;
    try { got = applyPatch(doc, patch); } catch { /* a failed patch: null */ }
    return { got, want };
  }), PATCHES);

  const send = async (text) => {
    await page.fill('#prompt', text);
    await page.click('#send');
  };
  const last = (selector) => page.locator(selector).last();
  const status = () => page.locator('#status').textContent();
  const settled = (text = 'ready') =>
    page.waitForFunction((want) => document.getElementById('status').textContent === want, text);
  const texts = (selector) => page.locator(selector).allTextContents();
  // Every state the panel showed, in order (each change replaces the panel's text node: a mutation record keeps
  // the node it added, so states shown within one task are all seen).
  await page.evaluate(() => {
    window.statesShown = [];
    new MutationObserver((records) => {
      for (const record of records) for (const node of record.addedNodes) window.statesShown.push(node.textContent);
    }).observe(document.getElementById('state'), { childList: true });
  });
  const parsed = (text) => { try { return JSON.parse(text); } catch { return text; } };
  const statesShown = async () => (await page.evaluate(() => window.statesShown.splice(0))).map(parsed);
  const shownState = async () => parsed(await page.locator('#state').textContent());
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

    // Shared state: the panel follows the run, and the state goes back with the next request.
    checks.stateBefore = await shownState();
    await statesShown();
    for (const round of [1, 2]) {
      await send('plan with state');
      await page.locator('.text', { hasText: `Planned run ${round}:` }).last().waitFor();
      await settled();
      (checks.states = checks.states || []).push(await shownState());
      (checks.statesShown = checks.statesShown || []).push(await statesShown());
    }
    checks.steps = await page.locator('#steps').isVisible() ? await page.locator('#steps').textContent() : null;
    checks.stateUsage = await last('.msg.role-assistant .usage').textContent();

    // A provider-run search and the sources the answer cites.
    await send('search the web');
    await page.locator('.text', { hasText: 'Both protocols stream' }).last().waitFor();
    await settled();
    checks.providerRun = await texts('.tool.provider-run');
    checks.sources = await page.locator('.msg.role-assistant').last().locator('.sources a').evaluateAll(
      (links) => links.map((a) => ({ href: a.getAttribute('href'), title: a.textContent })),
    );
    checks.searchUsage = await last('.msg.role-assistant .usage').textContent();
    checks.usage = await texts('.usage');

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
