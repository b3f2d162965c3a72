// vercel_check.mjs: run uibridge's Vercel AI output through the real `ai` 7 client, many cases per call.
//
// Usage:  node vercel_check.mjs < cases.json > results.json
//   cases.json = {
//     "validate": [{"name": str, "messages": UIMessage[]}],                 // dumped histories
//     "streams":  [{"name": str, "sse": str, "message"?: UIMessage}]      // encoded streams (+ the message continued)
//   }
// Output (one JSON document on stdout):
//   validate: {name: {success, error?, data?}}   safeValidateUIMessages, structural checks only; `data` is the
//             validated copy (unknown keys stripped)
//   streams:  {name: {errors: [str], message, valid, validationError?, chunkTypes}}   parseJsonEventStream with
//             uiMessageChunkSchema (as DefaultChatTransport does) then readUIMessageStream; `errors` collects
//             every error the client reported (schema, ordering, `error` chunks); `message` is the final
//             snapshot and `valid` says whether safeValidateUIMessages accepts it.
//   warnings: every line the SDK logged (console.warn / console.info / console.error) over the whole run, for the
//             cases to assert there is none; `convertToModelMessages` also runs on every validated history (as an
//             app does before calling a model), so its warnings count too.
// Exit code 0 when the run completed (check the results for failures), 2 on a usage error.
import {
  convertToModelMessages,
  parseJsonEventStream,
  readUIMessageStream,
  safeValidateUIMessages,
  uiMessageChunkSchema,
} from 'ai';

let input = '';
for await (const chunk of process.stdin) input += chunk;
if (!input.trim()) {
  console.error('usage: node vercel_check.mjs < cases.json');
  process.exit(2);
}
const cases = JSON.parse(input);

const warnings = [];
for (const level of ['warn', 'info', 'error']) {
  console[level] = (...args) => void warnings.push(`${level}: ${args.map(String).join(' ')}`.slice(0, 500));
}

async function validate(messages) {
  const r = await safeValidateUIMessages({ messages });
  if (!r.success) return { success: false, error: r.error.message };
  try {
    await convertToModelMessages(r.data);
  } catch (e) {
    return { success: false, error: `convertToModelMessages: ${String(e?.message ?? e)}`, data: r.data };
  }
  return { success: true, data: r.data };
}

function bodyOf(text) {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      // Split into small pieces so the SSE parser sees events cut at arbitrary points, as on a network.
      for (let i = 0; i < bytes.length; i += 97) controller.enqueue(bytes.slice(i, i + 97));
      controller.close();
    },
  });
}

async function readStream({ sse, message }) {
  const errors = [];
  const chunkTypes = [];
  const chunks = parseJsonEventStream({ stream: bodyOf(sse), schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(part, controller) {
        if (!part.success) throw part.error;
        chunkTypes.push(part.value.type);
        controller.enqueue(part.value);
      },
    }),
  );
  let last = message ?? null;
  try {
    for await (const snapshot of readUIMessageStream({
      message,
      stream: chunks,
      onError: (e) => errors.push(String(e?.message ?? e)),
    })) {
      last = snapshot;
    }
  } catch (e) {
    errors.push(String(e?.message ?? e));
  }
  const result = { errors, message: last, chunkTypes };
  if (last) {
    const v = await safeValidateUIMessages({ messages: [last] });
    result.valid = v.success;
    if (!v.success) result.validationError = v.error.message;
  } else {
    result.valid = false;
  }
  return result;
}

const out = { validate: {}, streams: {}, warnings };
for (const c of cases.validate ?? []) out.validate[c.name] = await validate(c.messages);
for (const c of cases.streams ?? []) out.streams[c.name] = await readStream(c);
process.stdout.write(JSON.stringify(out));
