// driver.mjs: runs the drivers of this folder one after another in one Node process, so that the client libraries
// (`ai`, `@ag-ui/client`: most of a driver's CPU time is loading them) load once per pytest worker, not once per
// driver run. Each run imports the driver's module afresh (a new URL), so its top-level code, its captures and its
// state are its own; the libraries' modules are shared, as they are between the scenarios of one driver.
//
// Protocol (one JSON document per line): stdin takes {"script", "argv"}; stdout gives {"stdout", "error"} for each,
// in order: what the driver wrote to stdout, and the failure that stopped it (a stack), or null. A rejection no run
// awaited, or an exception thrown from a timer, fails the run in progress; one that comes between runs is reported
// with the next run, naming the script it came after (a standalone driver would have exited non-zero for it).
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const writeOut = process.stdout.write.bind(process.stdout);
const saved = { argv: process.argv, console: { ...console } };
let current = null; // the run in progress: {captured, errors}
let lastScript = null;
let stray = []; // failures between runs, for the next one

function failure(error) {
  return error instanceof Error ? (error.stack ?? String(error)) : String(error);
}
process.on('unhandledRejection', (reason) => (current ? current.errors : stray).push(failure(reason)));
process.on('uncaughtException', (error) => (current ? current.errors : stray).push(failure(error)));

let count = 0;
async function run({ script, argv }) {
  const run = { captured: [], errors: stray.map((e) => `after ${lastScript}: ${e}`) };
  stray = [];
  current = run;
  process.argv = [saved.argv[0], resolve(script), ...argv];
  process.stdout.write = (chunk, ...rest) => {
    run.captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const callback = rest.find((arg) => typeof arg === 'function');
    if (callback) callback();
    return true;
  };
  try {
    await import(`${pathToFileURL(resolve(script)).href}?run=${++count}`);
  } catch (error) {
    run.errors.push(failure(error));
  } finally {
    // Let what the driver left scheduled for this turn (a rejection handler, a timer at 0) report to this run.
    await new Promise((done) => setTimeout(done, 0));
    current = null;
    lastScript = script;
    process.stdout.write = writeOut;
    process.argv = saved.argv;
    Object.assign(console, saved.console);
  }
  return { stdout: run.captured.join(''), error: run.errors.length ? run.errors.join('\n') : null };
}

const exit = process.exit;
process.exit = (code) => {
  // A driver that exits on bad arguments ends its run, not the process.
  throw new Error(`the driver called process.exit(${code})`);
};

let queue = Promise.resolve();
for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  queue = queue.then(async () => writeOut(JSON.stringify(await run(request)) + '\n'));
}
await queue;
if (stray.length) {
  // Nothing is left to report them with: say so, as a standalone driver's non-zero exit would.
  process.stderr.write(`after ${lastScript}:\n${stray.join('\n')}\n`);
  exit(1);
}
exit(0);
