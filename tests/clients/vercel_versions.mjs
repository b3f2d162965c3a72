// vercel_versions.mjs: what each installed `ai` major version (ai5 = ai@5, ai6 = ai@6, ai = ai@7) accepts, asked of
// the client itself, for tests/adapters/vercel_ai/test_sdk_versions.py.
//
// Usage: node vercel_versions.mjs <spec.json>; spec: {"tasks": [task, ...]}, each task one of
//   {"kind": "schema", "sdk", "probes": [{"chunk", "optional": [key, ...]}]}
//       Per probe: whether the version's `uiMessageChunkSchema` takes `chunk` (a minimal valid chunk of the type),
//       and which of `optional` it declares: a key it declares refuses the value 12345, which no chunk field of a
//       declared type (string, boolean, enum, object) takes; an undeclared key is let through as it is.
//   {"kind": "replay", "sdk", "sse", "message"?}
//       The SSE text as the version's transport reads it: each chunk checked against its `uiMessageChunkSchema`,
//       then `readUIMessageStream` (continuing `message`, when given) builds the message; that message is checked
//       with its `safeValidateUIMessages`, and `stripped` says whether the validator dropped or changed anything.
//   {"kind": "validate", "sdk", "messages"}
//       `safeValidateUIMessages` of the version on `messages`; `stripped` as above.
// Output: one result per task, in order: {"accepted", "declared"} per probe, or {"errors", "message", "valid", "stripped"};
// and `warnings`: every line the SDKs logged (console.warn / console.info / console.error) over the whole run, for
// the tests to assert there is none. Every message a client validated also goes through that version's
// `convertToModelMessages` (as an app does before calling a model): a failure there makes `valid` that error.
import { readFileSync } from 'node:fs';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const warnings = [];
for (const level of ['warn', 'info', 'error']) {
  console[level] = (...args) => void warnings.push(`${level}: ${args.map(String).join(' ')}`.slice(0, 500));
}
const sdks = {};
const sdk = async (name) => (sdks[name] ??= await import(name));

// JSON with keys sorted: equal for equal values whatever order a validator writes the keys in.
const canonical = (value) =>
  JSON.stringify(value, (_, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort()) : v,
  );

async function validateMessages(ai, messages) {
  const result = await ai.safeValidateUIMessages({ messages });
  if (!result.success) return { valid: String(result.error?.message ?? result.error).slice(0, 800), stripped: null };
  try {
    await ai.convertToModelMessages(result.data); // async in 6 and 7, sync in 5: awaiting either is fine
  } catch (e) {
    return { valid: `convertToModelMessages: ${String(e?.message ?? e).slice(0, 800)}`, stripped: null };
  }
  return { valid: true, stripped: canonical(result.data) !== canonical(JSON.parse(JSON.stringify(messages))) };
}

async function schema(task) {
  const ai = await sdk(task.sdk);
  const chunks = ai.uiMessageChunkSchema();
  const out = [];
  for (const probe of task.probes) {
    const accepted = (await chunks.validate(probe.chunk)).success;
    const declared = [];
    if (accepted) {
      for (const key of probe.optional) {
        if (!(await chunks.validate({ ...probe.chunk, [key]: 12345 })).success) declared.push(key);
      }
    }
    out.push({ accepted, declared });
  }
  return out;
}

async function replay(task) {
  const ai = await sdk(task.sdk);
  const chunks = ai.uiMessageChunkSchema();
  const errors = [];
  const parsed = [];
  for (const frame of task.sse.split('\n\n')) {
    if (!frame.startsWith('data: ') || frame === 'data: [DONE]') continue;
    const chunk = JSON.parse(frame.slice(6));
    const checked = await chunks.validate(chunk);
    if (!checked.success) errors.push(`${chunk.type}: ${String(checked.error?.message ?? checked.error).slice(0, 300)}`);
    else parsed.push(checked.value);
  }
  const stream = new ReadableStream({
    start(controller) {
      for (const chunk of parsed) controller.enqueue(chunk);
      controller.close();
    },
  });
  let message;
  const options = { stream, onError: (e) => errors.push(String(e?.message ?? e)) };
  if (task.message) options.message = structuredClone(task.message);
  for await (const built of ai.readUIMessageStream(options)) message = built;
  const checked = message ? await validateMessages(ai, [message]) : { valid: 'no message', stripped: null };
  return { errors, message: message ?? null, ...checked };
}

async function validate(task) {
  return validateMessages(await sdk(task.sdk), task.messages);
}

const kinds = { schema, replay, validate };
const out = [];
for (const task of spec.tasks) out.push(await kinds[task.kind](task));
process.stdout.write(JSON.stringify({ results: out, warnings }) + "\n");
