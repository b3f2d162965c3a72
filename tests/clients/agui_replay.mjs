// agui_replay.mjs: replay uibridge's AG-UI SSE bytes through @ag-ui/client's whole inbound pipeline, many cases
// per invocation (the pytest suite calls this once per batch to stay fast).
//
// Pipeline per case: HTTP events (headers + the body in small chunks, split mid-frame and mid-character) ->
// transformHttpEventStream (the client's own content-type switch and SSE parser) -> AbstractAgent.runAgent
// (CompatibilityBoundary, enforceEvents, transformChunks, verifyEvents, defaultApplyEvents).
//
// Usage: node agui_replay.mjs <cases.json>
//   cases.json: [{"name", "sse" (the response body), "contentType"?, "initialMessages"?, "initialState"?,
//   "chunkSize"?}]
// Prints one JSON array: per case {name, ok, error, warnings (console.warn / console.error lines), eventTypes,
// messages (agent.messages), newMessages, finished (what onRunFinishedEvent saw, with the event's usage),
// runError (RUN_ERROR's message, code and usage, as onRunErrorEvent saw them), pendingInterrupts, state (agent.state:
// what the client's own reducer made of STATE_SNAPSHOT / STATE_DELTA, with its JSON Patch), custom ({name, value}
// per CUSTOM event), raw ({event, source} per RAW event), steps (["started:<name>" | "finished:<name>"])}.
// Exit code 0 when every case ran (accepted or not; the caller asserts), 2 on a usage error.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { AbstractAgent, transformHttpEventStream } from "@ag-ui/client";

const file = process.argv[2];
if (!file) {
  console.error("usage: node agui_replay.mjs <cases.json>");
  process.exit(2);
}
const cases = JSON.parse(readFileSync(file, "utf8"));
const require = createRequire(import.meta.resolve("@ag-ui/client"));
const { Observable } = require("rxjs");

function httpEvents(body, contentType, chunkSize) {
  const bytes = new TextEncoder().encode(body);
  // Emitted asynchronously, as a real response body is: transformHttpEventStream subscribes to its source
  // before its caller subscribes to it, so a synchronous source would be read before anyone listens.
  return new Observable((sub) => {
    (async () => {
      await new Promise((resolve) => setImmediate(resolve));
      sub.next({ type: "headers", status: 200, headers: new Headers({ "content-type": contentType }) });
      for (let i = 0; i < bytes.length; i += chunkSize) {
        await new Promise((resolve) => setImmediate(resolve));
        sub.next({ type: "data", data: bytes.slice(i, i + chunkSize) });
      }
      sub.complete();
    })();
  });
}

class ReplayAgent extends AbstractAgent {
  constructor(config, source) {
    super(config);
    this.source = source;
  }
  run() {
    return transformHttpEventStream(this.source);
  }
}

const warnings = [];
const originalWarn = console.warn;
const originalError = console.error;
console.warn = (...args) => void warnings.push(args.map(String).join(" "));
console.error = (...args) => void warnings.push(args.map(String).join(" "));

const results = [];
for (const c of cases) {
  warnings.length = 0;
  const source = httpEvents(c.sse, c.contentType ?? "text/event-stream", c.chunkSize ?? 61);
  const agent = new ReplayAgent(
    { threadId: c.threadId ?? "thread", initialMessages: c.initialMessages ?? [], initialState: c.initialState ?? {} },
    source,
  );
  const eventTypes = [];
  const custom = [];
  const raw = [];
  const steps = [];
  let finished = null;
  let runError = null;
  let error = null;
  let newMessages = null;
  try {
    const run = await agent.runAgent(
      { runId: c.runId ?? "run" },
      {
        onEvent: ({ event }) => void eventTypes.push(event.type),
        onCustomEvent: ({ event }) => void custom.push({ name: event.name, value: event.value }),
        onRawEvent: ({ event }) => void raw.push({ event: event.event, source: event.source ?? null }),
        onStepStartedEvent: ({ event }) => void steps.push(`started:${event.stepName}`),
        onStepFinishedEvent: ({ event }) => void steps.push(`finished:${event.stepName}`),
        onRunErrorEvent: ({ event }) => {
          runError = { message: event.message, code: event.code ?? null, usage: event.usage ?? null };
        },
        onRunFinishedEvent: (params) => {
          finished = {
            outcome: params.outcome,
            pendingToolCallIds: params.pendingToolCallIds ?? null,
            interrupts: params.interrupts ?? null,
            usage: params.event.usage ?? null,
          };
        },
      },
    );
    newMessages = run.newMessages;
  } catch (e) {
    error = e?.message ?? String(e);
  }
  results.push({
    name: c.name,
    ok: error === null,
    error,
    warnings: [...warnings],
    eventTypes,
    messages: agent.messages,
    newMessages,
    finished,
    runError,
    pendingInterrupts: agent.pendingInterrupts ?? [],
    state: agent.state,
    custom,
    raw,
    steps,
  });
}
console.warn = originalWarn;
console.error = originalError;
process.stdout.write(JSON.stringify(results));
