// e2e_agui.mjs: run scenarios against a uibridge AG-UI endpoint with the real `@ag-ui/client` `HttpAgent`,
// and print what the client built, as JSON, for pytest to check.
//
// Usage: node e2e_agui.mjs <scenarios.json>
//   scenarios.json: {"url": "http://127.0.0.1:PORT/ag-ui", "scenarios": [{"name", "threadId", "steps": [...]}]}
// Steps (each a new run on the same agent, whose messages carry over):
//   {"op": "send", "text" | "content"}       add a user message (string or content parts) and run
//   {"op": "regenerate"}                     drop everything after the last user message and run again
//   {"op": "edit", "index", "text"}          replace that user message, drop what followed it, run
//   {"op": "resume", "approved", "reason"?}  answer every pending interrupt and run
//   {"op": "tool-output", "content"}         answer every tool call that has no result with a tool message and run
//   {"op": "set-messages", "messages"}       replace the history (a reload from stored history, or a forged one)
//   {"op": "edit-tool-args", "arguments"}    rewrite the arguments of the tool calls that have no result
//   {"op": "set-state", "state"}             replace the state the agent holds (a user editing it, as CopilotKit
//                                            allows); no run
//   {"op": "run", "resume"?}                  run again with no new message (and this resume list, if given)
//   {"op": "mutate", "js"}                   replace the history with what the function body `js` returns, given a
//                                            copy as `messages` (a tampered page); no run
//   {"op": "send-and-abort", "text"}         add a user message, run, and abortRun() at the first text content
// Output: {"<name>": {"steps": [{"op", "error", "messages", "state", "pendingInterrupts", "wireEvents", "runError",
//                     "warnings"}], "requests": [...]}}
//   `warnings`: what the client logged with console.warn during the step.
import { HttpAgent } from '@ag-ui/client';
import { readFileSync } from 'node:fs';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const warnings = [];
console.warn = (...args) => { warnings.push(args.map(String).join(' ')); };
const TOOLS = [
  {
    name: 'get_local_time',
    description: "The browser's local time",
    parameters: { type: 'object', properties: { timezone: { type: 'string' } } },
  },
];
let counter = 0;
const nextId = (prefix) => `${prefix}_${process.pid}_${++counter}`;

const unanswered = (messages) => {
  const answered = new Set(messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
  return messages.flatMap((m) => (m.toolCalls ?? []).filter((c) => !answered.has(c.id)));
};

async function runScenario(scenario) {
  const requests = [];
  const agent = new HttpAgent({
    url: spec.url,
    threadId: scenario.threadId,
    fetch: (u, init) => {
      requests.push(JSON.parse(init.body));
      return fetch(u, init);
    },
  });
  let wireEvents = [];
  agent.use((input, next) => {
    const source$ = next.run(input);
    const Obs = source$.constructor;
    return new Obs((sub) =>
      source$.subscribe({
        next: (e) => { wireEvents.push(e); sub.next(e); },
        error: (err) => sub.error(err),
        complete: () => sub.complete(),
      }),
    );
  });
  const steps = [];
  for (const step of scenario.steps) {
    wireEvents = [];
    warnings.length = 0;
    let subscriber = {};
    let error = null;
    const params = { runId: nextId('run'), tools: TOOLS };
    let run = true;
    if (step.op === 'send') {
      agent.addMessage({ id: nextId('user'), role: 'user', content: step.content ?? step.text });
    } else if (step.op === 'send-and-abort') {
      agent.addMessage({ id: nextId('user'), role: 'user', content: step.text });
      let aborted = false;
      subscriber = {
        onTextMessageContentEvent: () => {
          if (!aborted) {
            aborted = true;
            agent.abortRun();
          }
        },
      };
    } else if (step.op === 'regenerate') {
      const last = agent.messages.map((m) => m.role).lastIndexOf('user');
      agent.setMessages(agent.messages.slice(0, last + 1));
    } else if (step.op === 'edit') {
      const messages = agent.messages.slice(0, step.index + 1);
      messages[step.index] = { ...messages[step.index], content: step.text };
      agent.setMessages(messages);
    } else if (step.op === 'resume') {
      params.resume = agent.pendingInterrupts.map((i) => ({
        interruptId: i.id,
        status: 'resolved',
        payload: step.reason ? { approved: step.approved, reason: step.reason } : { approved: step.approved },
      }));
    } else if (step.op === 'tool-output') {
      for (const call of unanswered(agent.messages)) {
        agent.addMessage({ id: nextId('tool'), role: 'tool', toolCallId: call.id, content: step.content });
      }
    } else if (step.op === 'run') {
      if (step.resume) params.resume = step.resume;
    } else if (step.op === 'set-messages') {
      agent.setMessages(step.messages);
      run = false;
    } else if (step.op === 'mutate') {
      agent.setMessages(new Function('messages', step.js)(structuredClone(agent.messages)));
      run = false;
    } else if (step.op === 'set-state') {
      agent.setState(step.state);
      run = false;
    } else if (step.op === 'edit-tool-args') {
      const messages = structuredClone(agent.messages);
      const pending = new Set(unanswered(messages).map((c) => c.id));
      for (const m of messages) for (const c of m.toolCalls ?? []) if (pending.has(c.id)) c.function.arguments = step.arguments;
      agent.setMessages(messages);
      run = false;
    } else {
      throw new Error(`unknown step ${step.op}`);
    }
    if (run) {
      try {
        await agent.runAgent(params, {
          ...subscriber,
          onRunFailed: ({ error: e }) => { error = String(e?.message ?? e); },
        });
      } catch (e) {
        error = error ?? String(e?.message ?? e);
      }
    }
    steps.push({
      op: step.op,
      error,
      messages: structuredClone(agent.messages),
      state: structuredClone(agent.state ?? null),
      pendingInterrupts: structuredClone(agent.pendingInterrupts ?? []),
      wireEvents: wireEvents.map((e) => e.type),
      runError: wireEvents.find((e) => e.type === 'RUN_ERROR')?.message ?? null,
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
