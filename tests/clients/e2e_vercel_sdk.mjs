// e2e_vercel_sdk.mjs: the approval flow through one major version of the real `ai` client (`sdk`: "ai5", "ai6" or
// "ai", installed side by side), against a uibridge endpoint serving that version (`sdk_version`).
//
// Usage: node e2e_vercel_sdk.mjs <spec.json>
//   spec: {"api", "sdk", "scenarios": [{"name", "chatId", "steps": [...]}]}
// Steps (each after the previous one finished; the client's own messages carry over):
//   {"op": "send", "text"}                 chat.sendMessage
//   {"op": "answer", "approved", "reason"?} answer the call awaiting approval the way this version can, then
//                                          sendMessage(): `addToolApprovalResponse` (ai 6, 7); ai 5 has no approvals,
//                                          so the app answers the call uibridge marked for approval with
//                                          `addToolResult({output: {approved, reason?}})`
// Output: {"<name>": {"steps": [{"op", "status", "errors", "valid", "messages"}], "toolCalls": [toolCallId...]}}
//   `errors`: every error the client reported in the step (onError, chat.error); `valid`: true, or the version's own
//   `safeValidateUIMessages` error; `toolCalls`: the calls `onToolCall` saw.
import { readFileSync } from 'node:fs';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { AbstractChat, DefaultChatTransport, safeValidateUIMessages } = await import(spec.sdk);

class ChatState {
  status = 'ready';
  error = undefined;
  messages = [];
  pushMessage = (m) => { this.messages = [...this.messages, structuredClone(m)]; };
  popMessage = () => { this.messages = this.messages.slice(0, -1); };
  replaceMessage = (i, m) => { this.messages = this.messages.map((old, j) => (j === i ? structuredClone(m) : old)); };
  snapshot = (v) => structuredClone(v);
}

class Chat extends AbstractChat {
  constructor(init) { super({ ...init, state: new ChatState() }); }
}

const waiting = (chat) => {
  for (const part of chat.messages.flatMap((m) => m.parts)) {
    if (part.state === 'approval-requested') return part;
    if (part.state === 'input-available' && part.callProviderMetadata?.uibridge?.approval === true) return part;
  }
  throw new Error('no call awaits an approval');
};

async function answer(chat, step) {
  const part = waiting(chat);
  if (part.approval) {
    await chat.addToolApprovalResponse({ id: part.approval.id, approved: step.approved, reason: step.reason });
  } else {
    const output = step.reason === undefined ? { approved: step.approved } : { approved: step.approved, reason: step.reason };
    await chat.addToolResult({ tool: part.type.slice('tool-'.length), toolCallId: part.toolCallId, output });
  }
  await chat.sendMessage();
}

async function runScenario(scenario) {
  const errors = [];
  const toolCalls = [];
  const chat = new Chat({
    id: scenario.chatId,
    transport: new DefaultChatTransport({ api: spec.api }),
    onError: (e) => errors.push(String(e?.message ?? e)),
    onToolCall: ({ toolCall }) => { toolCalls.push(toolCall.toolCallId); },
  });
  const record = async (op) => {
    if (chat.error) errors.push(String(chat.error.message ?? chat.error));
    const checked = await safeValidateUIMessages({ messages: chat.messages });
    const valid = checked.success || String(checked.error?.message ?? checked.error).slice(0, 500);
    return { op, status: chat.status, errors: errors.splice(0), valid, messages: structuredClone(chat.messages) };
  };
  const steps = [];
  for (const step of scenario.steps) {
    if (step.op === 'send') await chat.sendMessage({ text: step.text });
    else if (step.op === 'answer') await answer(chat, step);
    else throw new Error(`unknown step ${step.op}`);
    steps.push(await record(step.op));
  }
  return { steps, toolCalls };
}

// A scenario that throws is reported as crashed, and the others still run.
const crashed = (e) => ({ crashed: String(e?.stack ?? e) });
const results = {};
for (const scenario of spec.scenarios) results[scenario.name] = await runScenario(scenario).catch(crashed);
process.stdout.write(JSON.stringify(results) + '\n');
