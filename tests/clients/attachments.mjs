// attachments.mjs: files sent the way each real client sends them, to a live uibridge server.
//
// Usage: node attachments.mjs <spec.json>
//   spec: {"vercel": {"api", "cases": [{"name", "chatId", "text", "files": [FileUIPart...]}]},
//          "agui": {"url", "cases": [{"name", "threadId", "content": [content parts...]}]}}
//   Vercel: `ai`@7's `Chat.sendMessage({text, files})` (file parts as an app builds them: mediaType, url,
//   filename). AG-UI: `@ag-ui/client`'s `HttpAgent` with one user message of `content` (a legacy `binary` part is
//   upgraded by the client itself, as it upgrades one from any 0.x app).
// Output: {"<name>": {"error", "status", "messages", "warnings"}}: `error` is what the client reported (onError,
//   a rejected run), null when none; `messages`: the client's messages after the turn.
import { readFileSync } from 'node:fs';
import { DefaultChatTransport } from 'ai';
import { HttpAgent } from '@ag-ui/client';
import { NodeChat } from './node_chat.mjs';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const warnings = [];
console.warn = (...args) => void warnings.push(args.map(String).join(' '));

async function vercel(c) {
  const errors = [];
  const chat = new NodeChat({
    id: c.chatId,
    transport: new DefaultChatTransport({ api: spec.vercel.api }),
    onError: (e) => errors.push(String(e?.message ?? e)),
  });
  await chat.sendMessage({ text: c.text, files: c.files });
  if (chat.error && errors.length === 0) errors.push(String(chat.error.message ?? chat.error));
  return { error: errors.join('\n') || null, status: chat.status, messages: structuredClone(chat.messages) };
}

async function agui(c) {
  const agent = new HttpAgent({ url: spec.agui.url, threadId: c.threadId });
  agent.addMessage({ id: `${c.threadId}-user`, role: 'user', content: c.content });
  let error = null;
  try {
    await agent.runAgent({});
  } catch (e) {
    error = String(e?.message ?? e);
  }
  return { error, status: error === null ? 'ready' : 'error', messages: structuredClone(agent.messages) };
}

const results = {};
for (const [run, cases] of [[vercel, spec.vercel?.cases ?? []], [agui, spec.agui?.cases ?? []]]) {
  for (const c of cases) {
    warnings.length = 0;
    try {
      results[c.name] = { ...(await run(c)), warnings: [...warnings] };
    } catch (e) {
      results[c.name] = { crashed: String(e?.stack ?? e) };
    }
  }
}
process.stdout.write(JSON.stringify(results));
