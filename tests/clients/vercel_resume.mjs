// vercel_resume.mjs: a stream dropped mid-answer and resumed with the real `ai@7` client (`AbstractChat` +
// `DefaultChatTransport`, resumeStreamIsReplay on, as by default), beside an uninterrupted run for reference.
//
// Usage: node vercel_resume.mjs <spec.json>
//   spec: {"api": "http://HOST:PORT/api/chat",          where messages are sent (the producer)
//          "resumeApi"?: "http://OTHER:PORT/api/chat",  where the stream is resumed (default: api)
//          "headers"?: {...},                           sent with every request (x-demo-user, say)
//          "lastOnly"?: true,                           send only the last message (prepareSendMessagesRequest)
//          "runs": [{"name", "chatId", "text", "dropAfter"?}]}
//   dropAfter: the number of body chunks the client reads before it drops the connection (aborts the fetch);
//   then `chat.resumeStream()` fetches GET {resumeApi}/{chatId}/stream. Without it the run is uninterrupted.
// Output: {"<name>": {"dropped": bool, "afterDrop": {status, messages}, "status", "error", "messages",
//          "resumeStatus": HTTP status of the resume request}}
import { DefaultChatTransport } from 'ai';
import { readFileSync } from 'node:fs';
import { NodeChat } from './node_chat.mjs';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));

// A fetch that hands the client `dropAfter` body chunks of the POST and then cuts the connection.
function droppingFetch(dropAfter, outcome) {
  return async (url, init) => {
    if (init.method === 'GET') {
      const response = await fetch(url, init);
      outcome.resumeStatus = response.status;
      return response;
    }
    if (dropAfter == null) return fetch(url, init);
    const abort = new AbortController();
    const response = await fetch(url, { ...init, signal: abort.signal });
    const reader = response.body.getReader();
    let seen = 0;
    const body = new ReadableStream({
      async pull(controller) {
        if (seen >= dropAfter) {
          outcome.dropped = true;
          abort.abort();  // the socket closes: the server sees the client go away
          controller.error(new TypeError('network connection lost'));
          return;
        }
        const { value, done } = await reader.read();
        if (done) { controller.close(); return; }
        seen += 1;
        controller.enqueue(value);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

async function play(run) {
  const outcome = { dropped: false, resumeStatus: null };
  const resumeApi = spec.resumeApi ?? spec.api;
  const errors = [];
  const chat = new NodeChat({
    id: run.chatId,
    transport: new DefaultChatTransport({
      api: spec.api,
      headers: spec.headers ?? {},
      fetch: droppingFetch(run.dropAfter, outcome),
      // With a store the server needs only the last message: send just that, as the README shows.
      prepareSendMessagesRequest: spec.lastOnly
        ? ({ id, messages, trigger, messageId }) => ({ body: { id, messages: messages.slice(-1), trigger, messageId } })
        : undefined,
      prepareReconnectToStreamRequest: ({ id, headers }) => ({ api: `${resumeApi}/${encodeURIComponent(id)}/stream`, headers }),
    }),
    onError: (e) => errors.push(String(e?.message ?? e)),
  });
  await chat.sendMessage({ text: run.text });
  if (run.dropAfter != null) {
    outcome.afterDrop = { status: chat.status, messages: structuredClone(chat.messages) };
    await chat.resumeStream();
  }
  return {
    ...outcome,
    status: chat.status,
    error: chat.error ? String(chat.error.message ?? chat.error) : null,
    errors,
    messages: structuredClone(chat.messages),
  };
}

// The runs are independent chats: they play at once, so the slow answers stream side by side, not one after another.
const outcomes = await Promise.all(spec.runs.map(async (run) => {
  try {
    return await play(run);
  } catch (e) {
    return { crashed: String(e?.stack ?? e) };
  }
}));
const out = Object.fromEntries(spec.runs.map((run, i) => [run.name, outcomes[i]]));
process.stdout.write(JSON.stringify(out) + '\n');
