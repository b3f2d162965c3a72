// agui_tabs.mjs: several `@ag-ui/client` `HttpAgent`s on one thread (browser tabs of one chat), each sending in
// turn, and what each one ends up holding, as JSON, for pytest to check.
//
// Usage: node agui_tabs.mjs <spec.json>
//   spec.json: {"url", "scenarios": [{"name", "threadId", "tabs": N, "steps": [{"tab", "text" | "content", "parentRunId"?}]}]}
//   Each step adds a user message to that tab and runs it; `parentRunId`, when given, goes into the run's input
//   (HttpAgent has no option for it: a middleware adds it, as an application that branches runs would).
// Output: {"<name>": {"steps": [{"tab", "error", "messages", "events", "warnings"}], "requests": [...]}}
//   `events`: every event the tab's pipeline applied, whole; `warnings`: what the client logged with console.warn.
import { HttpAgent } from '@ag-ui/client';
import { readFileSync } from 'node:fs';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const warnings = [];
console.warn = (...args) => { warnings.push(args.map(String).join(' ')); };
let counter = 0;
const nextId = (prefix) => `${prefix}_${process.pid}_${++counter}`;

function tab(threadId, requests, seen) {
  const agent = new HttpAgent({
    url: spec.url,
    threadId,
    fetch: (u, init) => {
      requests.push(JSON.parse(init.body));
      return fetch(u, init);
    },
  });
  agent.use((input, next) => {
    const source$ = next.run(agent.parentRunId ? { ...input, parentRunId: agent.parentRunId } : input);
    const Obs = source$.constructor;
    return new Obs((sub) =>
      source$.subscribe({
        next: (e) => { seen.push(e); sub.next(e); },
        error: (err) => sub.error(err),
        complete: () => sub.complete(),
      }),
    );
  });
  return agent;
}

async function runScenario(scenario) {
  const requests = [];
  const seen = [];
  const tabs = Array.from({ length: scenario.tabs ?? 1 }, () => tab(scenario.threadId, requests, seen));
  const steps = [];
  for (const step of scenario.steps) {
    const agent = tabs[step.tab ?? 0];
    seen.length = 0;
    warnings.length = 0;
    agent.parentRunId = step.parentRunId;
    agent.addMessage({ id: nextId('user'), role: 'user', content: step.content ?? step.text });
    let error = null;
    try {
      await agent.runAgent({ runId: nextId('run') }, { onRunFailed: ({ error: e }) => { error = String(e?.message ?? e); } });
    } catch (e) {
      error = error ?? String(e?.message ?? e);
    }
    steps.push({
      tab: step.tab ?? 0,
      error,
      messages: structuredClone(agent.messages),
      events: structuredClone(seen),
      warnings: warnings.splice(0),
    });
  }
  return { steps, requests };
}

const out = {};
for (const scenario of spec.scenarios) {
  try {
    out[scenario.name] = await runScenario(scenario);
  } catch (e) {
    out[scenario.name] = { crashed: String(e?.stack ?? e) };
  }
}
process.stdout.write(JSON.stringify(out) + '\n');
