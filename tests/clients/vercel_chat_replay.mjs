// vercel_chat_replay.mjs: replay recorded uibridge Vercel AI streams through the real `ai@7` `Chat`
// (`AbstractChat` + `DefaultChatTransport`, whose fetch answers with the recorded body), and report what the
// chat built and every error, warning and callback it produced. No server: each case is one request.
//
// Usage:  node vercel_chat_replay.mjs < cases.json > results.json
//   cases.json = {"cases": [{"name": str, "sse": str, "messages"?: UIMessage[], "continue"?: bool}]}
//     messages: the chat's history before the request; continue: send no new user message (the chat then
//     continues its last assistant message, as after a tool output or an approval), else one user message.
// Output: {name: {status, error, messages, onData: [{type, id, data, transient}], onToolCall: [toolName],
//                 onFinish: [{isError, isAbort, finishReason}], errors: [str], warnings: [str], valid}}
//   warnings: whatever the client printed with console.warn / console.error while the case ran.
import { DefaultChatTransport, safeValidateUIMessages } from 'ai';
import { NodeChat } from './node_chat.mjs';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { cases } = JSON.parse(input);

const warnings = [];
for (const level of ['warn', 'error']) {
  console[level] = (...args) => warnings.push(args.map(String).join(' '));
}

const HEADERS = { 'content-type': 'text/event-stream', 'x-vercel-ai-ui-message-stream': 'v1' };

async function replay(c) {
  warnings.length = 0;
  const seen = { onData: [], onToolCall: [], onFinish: [], errors: [] };
  const chat = new NodeChat({
    id: `replay-${c.name}`,
    messages: structuredClone(c.messages ?? []),
    transport: new DefaultChatTransport({
      api: 'http://replay.invalid/api/chat',
      fetch: async () => new Response(c.sse, { status: 200, headers: HEADERS }),
    }),
    onData: (part) => seen.onData.push({ type: part.type, id: part.id, data: part.data, transient: part.transient }),
    onToolCall: ({ toolCall }) => seen.onToolCall.push(toolCall.toolName),
    onFinish: ({ isError, isAbort, finishReason }) => seen.onFinish.push({ isError, isAbort, finishReason }),
    onError: (e) => seen.errors.push(String(e?.message ?? e)),
  });
  if (c.continue) await chat.sendMessage();
  else await chat.sendMessage({ text: 'go' });
  const validated = await safeValidateUIMessages({ messages: chat.messages });
  return {
    ...seen,
    status: chat.status,
    error: chat.error ? String(chat.error.message ?? chat.error) : null,
    messages: structuredClone(chat.messages),
    warnings: [...warnings],
    valid: validated.success ? true : String(validated.error?.message ?? validated.error),
  };
}

const out = {};
for (const c of cases) out[c.name] = await replay(c);
process.stdout.write(JSON.stringify(out));
