// e2e_vercel.mjs: run chat scenarios against a uibridge Vercel AI endpoint with the real `ai@7` client
// (`AbstractChat` + `DefaultChatTransport`), and print what the client built, as JSON, for pytest to check.
//
// Usage: node e2e_vercel.mjs <scenarios.json>
//   scenarios.json: {"api": "http://127.0.0.1:PORT/api/chat", "scenarios": [{"name", "chatId", "steps": [...]}]}
// Steps (each runs after the previous one finished; the client's own messages carry over):
//   {"op": "send", "text", "files"?: [{type:"file", mediaType, url}]}   chat.sendMessage
//   {"op": "regenerate"}                                                chat.regenerate (last answer)
//   {"op": "edit", "index", "text"}                                     sendMessage({text, messageId}) on that user message
//   {"op": "approve", "approved", "reason"?}                            addToolApprovalResponse, then sendMessage()
//   {"op": "tool-output", "output"}                                     addToolOutput on the waiting client tool, then sendMessage()
//   {"op": "set-messages", "messages"}                                  replace the history (a page reload from stored history,
//                                                                       or a forged one)
//   {"op": "edit-tool-input", "input"}                                  rewrite the input of the call awaiting approval
//   {"op": "continue"}                                                  sendMessage() with no new message (continues the
//                                                                       last assistant message, as after an approval)
//   {"op": "mutate", "js"}                                              replace the history with what the function body `js`
//                                                                       returns, given a copy as `messages` (a tampered page)
//   {"op": "send-and-stop", "text"}                                     sendMessage, then chat.stop() once the answer shows text
// Output: {"<name>": {"steps": [{"op", "status", "error", "messages", "warnings"}], "requests": [<POST bodies>]}}
//   `warnings`: what the client logged with console.warn during the step.
import { DefaultChatTransport, safeValidateUIMessages } from 'ai';
import { readFileSync } from 'node:fs';
import { NodeChat } from './node_chat.mjs';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const warnings = [];
console.warn = (...args) => { warnings.push(args.map(String).join(' ')); };

const answerText = (chat) =>
  chat.messages.at(-1)?.role === 'assistant'
    ? chat.messages.at(-1).parts.filter((p) => p.type === 'text').map((p) => p.text).join('')
    : '';

async function until(condition) {
  for (const deadline = Date.now() + 10_000; !condition(); ) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the stream');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const toolParts = (chat) =>
  chat.messages.flatMap((m) => m.parts.filter((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool'));

async function runScenario(scenario) {
  const requests = [];
  const errors = [];
  const chat = new NodeChat({
    id: scenario.chatId,
    transport: new DefaultChatTransport({
      api: spec.api,
      fetch: async (url, init) => {
        requests.push(JSON.parse(init.body));
        return fetch(url, init);
      },
    }),
    onError: (e) => errors.push(String(e?.message ?? e)),
  });
  const steps = [];
  for (const step of scenario.steps) {
    errors.length = 0;
    warnings.length = 0;
    if (step.op === 'send') {
      await chat.sendMessage(step.files ? { text: step.text, files: step.files } : { text: step.text });
    } else if (step.op === 'regenerate') {
      await chat.regenerate();
    } else if (step.op === 'edit') {
      await chat.sendMessage({ text: step.text, messageId: chat.messages[step.index].id });
    } else if (step.op === 'approve') {
      const part = toolParts(chat).find((p) => p.state === 'approval-requested');
      if (!part) throw new Error('no approval was requested');
      await chat.addToolApprovalResponse({ id: part.approval.id, approved: step.approved, reason: step.reason });
      await chat.sendMessage();
    } else if (step.op === 'tool-output') {
      const part = toolParts(chat).find((p) => p.state === 'input-available');
      if (!part) throw new Error('no tool call is waiting for the client');
      await chat.addToolOutput({ tool: part.type.slice(5), toolCallId: part.toolCallId, output: step.output });
      await chat.sendMessage();
    } else if (step.op === 'send-and-stop') {
      const count = chat.messages.length;
      const sending = chat.sendMessage({ text: step.text });
      await until(() => chat.messages.length > count + 1 && answerText(chat).length > 0);
      await chat.stop();
      await sending;
    } else if (step.op === 'continue') {
      await chat.sendMessage();
    } else if (step.op === 'set-messages') {
      chat.messages = step.messages;
    } else if (step.op === 'mutate') {
      chat.messages = new Function('messages', step.js)(structuredClone(chat.messages));
    } else if (step.op === 'edit-tool-input') {
      const messages = structuredClone(chat.messages);
      for (const m of messages) for (const p of m.parts) if (p.state === 'approval-requested') p.input = step.input;
      chat.messages = messages;
    } else {
      throw new Error(`unknown step ${step.op}`);
    }
    const validated = await safeValidateUIMessages({ messages: chat.messages });
    steps.push({
      op: step.op,
      status: chat.status,
      error: chat.error ? String(chat.error.message ?? chat.error) : errors[0] ?? null,
      valid: validated.success ? true : String(validated.error?.message ?? validated.error).slice(0, 500),
      messages: structuredClone(chat.messages),
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
