// vercel_backend.mjs: a Vercel AI SDK chat route as an application writes one, for the bridge's tests: `ai@7`'s
// `streamText` with the SDK's own mock language model (`MockLanguageModelV4` from `ai/test`, the version's mock),
// a server tool (`get_weather`), a client tool (`get_local_time`, no `execute`: the browser answers it) and a tool
// that needs approval (`delete_file`), answered with `result.toUIMessageStreamResponse()`.
//
// Usage: node vercel_backend.mjs   -> prints {"port": N} once listening on 127.0.0.1 (a free port)
//   POST /api/chat   the route: {id, messages, ...} as DefaultChatTransport posts it
//   GET  /log        what each request asked and how its stream ended: [{id, text, aborted, ended, state}]
// The model answers by the conversation: a tool result -> "Done: <output>"; else by the last user text:
//   weather | time (client tool) | delete (approval) | think | error | slow (until cancelled) | state | anything else.
// `state` writes a `data-state` part (the shared state, uibridge's convention) from the body's `state` key.
import http from 'node:http';
import {
  convertToModelMessages,
  createUIMessageStream,
  createUIMessageStreamResponse,
  jsonSchema,
  stepCountIs,
  streamText,
  tool,
} from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const log = [];
const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

function lastUserText(prompt) {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i];
    if (message.role !== 'user') continue;
    const text = message.content.find((part) => part.type === 'text');
    if (text) return text.text;
  }
  return '';
}

function parts(prompt, entry) {
  const last = prompt.at(-1);
  if (last?.role === 'tool') {
    const result = last.content.find((part) => part.type === 'tool-result');
    const output = result?.output;
    const shown =
      output?.type === 'execution-denied' ? `denied (${output.reason ?? 'no reason'})` : JSON.stringify(output?.value);
    return { text: [`Done: `, shown], finish: 'stop' };
  }
  const text = lastUserText(prompt).toLowerCase();
  if (text.includes('weather')) return { call: ['get_weather', { city: 'Paris' }] };
  if (text.includes('time')) return { call: ['get_local_time', { timezone: 'UTC' }] };
  if (text.includes('delete')) return { call: ['delete_file', { path: 'notes.txt' }] };
  if (text.includes('think')) return { reasoning: 'Let me think.', text: ['Thought it ', 'through.'] };
  if (text.includes('error')) return { text: ['Let me start'], error: 'the model broke' };
  if (text.includes('slow')) return { slow: true };
  if (text.includes('state')) return { text: ['Counted.'] };
  entry.plain = true;
  return { text: ['Hello ', 'from the ', 'AI SDK.'] };
}

function modelStream(script, entry) {
  const chunks = [{ type: 'stream-start', warnings: [] }];
  if (script.reasoning) {
    chunks.push({ type: 'reasoning-start', id: 'r1' }, { type: 'reasoning-delta', id: 'r1', delta: script.reasoning });
    chunks.push({ type: 'reasoning-end', id: 'r1' });
  }
  if (script.text) {
    chunks.push({ type: 'text-start', id: 't1' });
    for (const delta of script.text) chunks.push({ type: 'text-delta', id: 't1', delta });
    if (!script.error) chunks.push({ type: 'text-end', id: 't1' });
  }
  if (script.call) {
    const [toolName, input] = script.call;
    const id = `call_${toolName}_${log.length}`;
    const json = JSON.stringify(input);
    chunks.push({ type: 'tool-input-start', id, toolName });
    chunks.push({ type: 'tool-input-delta', id, delta: json.slice(0, 5) }, { type: 'tool-input-delta', id, delta: json.slice(5) });
    chunks.push({ type: 'tool-input-end', id }, { type: 'tool-call', toolCallId: id, toolName, input: json });
  }
  if (script.error) {
    chunks.push({ type: 'error', error: new Error(script.error) });
  }
  const finish = script.call ? 'tool-calls' : 'stop';
  chunks.push({ type: 'finish', finishReason: { unified: finish, raw: finish }, usage: usage(5, 7) });
  if (script.slow) {
    let n = 0;
    return new ReadableStream({
      async pull(controller) {
        if (n === 0) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'text-start', id: 't1' });
        }
        n += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
        controller.enqueue({ type: 'text-delta', id: 't1', delta: `tick ${n} ` });
      },
      cancel() {
        entry.cancelled = true;
      },
    });
  }
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

const tools = {
  get_weather: tool({
    description: 'The weather in a city',
    inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
    execute: async ({ city }) => ({ city, forecast: 'sunny', tempC: 21 }),
  }),
  get_local_time: tool({
    description: "The browser's local time",
    inputSchema: jsonSchema({ type: 'object', properties: { timezone: { type: 'string' } } }),
  }),
  delete_file: tool({
    description: 'Delete a file',
    inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    needsApproval: true,
    execute: async ({ path }) => `deleted ${path}`,
  }),
};

async function chat(body, entry, signal) {
  const model = new MockLanguageModelV4({
    modelId: 'mock-model',
    doStream: async ({ prompt }) => ({ stream: modelStream(parts(prompt, entry), entry) }),
  });
  const messages = await convertToModelMessages(body.messages, { tools });
  const user = body.messages.findLast((m) => m.role === 'user');
  entry.text = user?.parts.find((p) => p.type === 'text')?.text ?? '';
  const result = streamText({ model, messages, tools, stopWhen: stepCountIs(5), abortSignal: signal });
  if (!entry.text.toLowerCase().includes('state')) {
    return result.toUIMessageStreamResponse();
  }
  const state = { ...(body.state ?? {}), count: (body.state?.count ?? 0) + 1 };
  entry.state = state;
  const stream = createUIMessageStream({
    execute: ({ writer }) => {
      writer.merge(result.toUIMessageStream());
      writer.write({ type: 'data-state', id: 'state', data: state });
    },
  });
  return createUIMessageStreamResponse({ stream });
}

const server = http.createServer(async (req, res) => {
  if (req.method === 'GET' && req.url === '/log') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(log));
    return;
  }
  if (req.method !== 'POST' || req.url !== '/api/chat') {
    res.writeHead(404);
    res.end();
    return;
  }
  let raw = '';
  for await (const chunk of req) raw += chunk;
  const body = JSON.parse(raw);
  const entry = { id: body.id, aborted: false, ended: false };
  log.push(entry);
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableEnded) {
      entry.aborted = true;
      controller.abort();
    }
  });
  try {
    const response = await chat(body, entry, controller.signal);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    for await (const chunk of response.body) {
      if (res.destroyed) break;
      res.write(chunk);
    }
    entry.ended = !entry.aborted;
    res.end();
  } catch (error) {
    entry.failed = String(error?.message ?? error);
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(entry.failed);
  }
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});
