// agui_request.mjs: what @ag-ui/client's HttpAgent really POSTs, for many cases in one invocation.
//
// Per case an HttpAgent holds `initialMessages` (and `initialState`) and runs once with the case's tools, context,
// forwardedProps and resume. Its fetch is a stub that records the request and answers with the case's SSE body,
// so the whole outgoing path runs (prepareRunAgentInput, enforceOutgoingInput, the JSON body) and the answer goes
// back through the inbound pipeline.
//
// Usage: node agui_request.mjs <cases.json>
//   cases.json: [{"name", "initialMessages", "initialState"?, "tools"?, "context"?, "forwardedProps"?, "resume"?,
//                 "sse"}]
// Prints one JSON array: per case {name, ok, error, warnings, headers, body (the parsed request body), messages}.
import { readFileSync } from "node:fs";
import { HttpAgent } from "@ag-ui/client";

const file = process.argv[2];
if (!file) {
  console.error("usage: node agui_request.mjs <cases.json>");
  process.exit(2);
}
const cases = JSON.parse(readFileSync(file, "utf8"));

const warnings = [];
const originalWarn = console.warn;
const originalError = console.error;
console.warn = (...args) => void warnings.push(args.map(String).join(" "));
console.error = (...args) => void warnings.push(args.map(String).join(" "));

const results = [];
for (const c of cases) {
  warnings.length = 0;
  let request = null;
  const fetchStub = async (url, init) => {
    request = { headers: init.headers, body: JSON.parse(init.body) };
    return new Response(c.sse, { status: 200, headers: { "content-type": "text/event-stream" } });
  };
  const agent = new HttpAgent({
    url: "http://uibridge.test/agui",
    threadId: c.threadId ?? "thread",
    initialMessages: c.initialMessages ?? [],
    initialState: c.initialState ?? {},
    fetch: fetchStub,
  });
  const params = { runId: c.runId ?? "run" };
  for (const key of ["tools", "context", "forwardedProps", "resume"]) if (c[key] !== undefined) params[key] = c[key];
  let error = null;
  try {
    await agent.runAgent(params);
  } catch (e) {
    error = e?.message ?? String(e);
  }
  results.push({
    name: c.name,
    ok: error === null,
    error,
    warnings: [...warnings],
    headers: request?.headers ?? null,
    body: request?.body ?? null,
    messages: agent.messages,
  });
}
console.warn = originalWarn;
console.error = originalError;
process.stdout.write(JSON.stringify(results));
