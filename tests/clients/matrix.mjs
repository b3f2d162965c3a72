// matrix.mjs: the cells of the end-to-end matrix (tests/e2e/test_matrix.py), each a chat played through a real client
// against its own uibridge endpoint, many cells side by side in this one process; prints what each client built.
//
// Usage: node matrix.mjs <plan.json>
//   plan: {"concurrency": N, "cells": [cell, ...]}
//   cell: {"id", "protocol": "vercel" | "agui", "url" (the endpoint: /api/chat or /ag-ui), "chatId", "steps": [...],
//          "sdk"?: "ai" | "ai5" | "ai6" (Vercel: which major version of `ai`; default "ai", ai@7),
//          "lastOnly"?: true (Vercel: send only the last message, as an app with a store does),
//          "auto"?: true (Vercel: `sendAutomaticallyWhen` sends the next turn the moment a client tool's output is in,
//                         and `onToolCall` answers `get_local_time` with "noon", as an app running that tool does)}
// Steps, each after the previous one finished (a chat's messages carry over):
//   {"op": "send", "text"}                     a user message
//   {"op": "tool-output", "output"}            answer the call waiting for the client (Vercel: addToolOutput, then
//                                              sendMessage(); AG-UI: a tool message with `output` as its content, run)
//   {"op": "answer", "approved", "reason"?}    answer the approval request (Vercel ai 6, 7: addToolApprovalResponse;
//                                              ai 5, which has no approvals: the call's output {approved, reason?};
//                                              AG-UI: resume the pending interrupts), then send / run
//   {"op": "send-and-drop", "text", "dropAfter"} Vercel: send, and cut the connection after `dropAfter` body chunks
//   {"op": "resume"}                           Vercel: chat.resumeStream() (GET {url}/{chatId}/stream)
//   {"op": "send-and-abort", "text"}           AG-UI: send, and abortRun() at the first text content
//   {"op": "reload"}                           AG-UI: a fresh HttpAgent on the thread (a reloaded page) replays the chat's
//                                              stream (its fetch asks GET {url}/{threadId}/stream), then takes the stored
//                                              messages (GET {url}/{threadId}) as its own
//   {"op": "stored"}                           GET {url}/{chatId}: the stored messages, as `stored` (no run)
// Output: {"<cell id>": {"steps": [step, ...], "statuses": [HTTP status of every request]} | {"crashed"}}
//   Vercel step: {"op", "status", "error", "errors", "valid", "messages", "dropped"?, "resumeStatus"?, "stored"?}
//   AG-UI step:  {"op", "error", "runError", "wireEvents", "messages", "state", "pendingInterrupts", "text"?,
//                 "stored"?, "events"? (every event whole, when the step says `"events": true`)}
import { readFileSync } from 'node:fs';
import { HttpAgent } from '@ag-ui/client';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
console.warn = () => {}; // the clients' own warnings are not what a cell checks
const sdks = {};
const sdk = async (name) => (sdks[name] ??= await import(name));

async function until(condition, what) {
  for (const deadline = Date.now() + 30_000; !condition(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function storedMessages(url, statuses) {
  const response = await fetch(url);
  statuses.push(response.status);
  return response.status === 200 ? response.json() : null;
}

// ------------------------------------------------------------------------------------------------------ Vercel

function chatClass(ai) {
  class State {
    status = 'ready';
    error = undefined;
    messages = [];
    pushMessage = (m) => { this.messages = [...this.messages, structuredClone(m)]; };
    popMessage = () => { this.messages = this.messages.slice(0, -1); };
    replaceMessage = (i, m) => { this.messages = this.messages.map((old, j) => (j === i ? structuredClone(m) : old)); };
    snapshot = (v) => structuredClone(v);
  }
  return class extends ai.AbstractChat {
    constructor(init) { super({ ...init, state: new State() }); }
  };
}

const toolParts = (chat) => chat.messages.flatMap((m) => m.parts.filter((p) => p.type.startsWith('tool-')));

function waitingForApproval(chat) {
  for (const part of toolParts(chat)) {
    if (part.state === 'approval-requested') return part;
    if (part.state === 'input-available' && part.callProviderMetadata?.uibridge?.approval === true) return part;
  }
  throw new Error('no call awaits an approval');
}

// The transport's fetch: every status kept; `drop.after` set, the next POST's body is cut after that many chunks.
function vercelFetch(statuses, drop) {
  return async (url, init) => {
    if (drop.after == null || init.method === 'GET') {
      const response = await fetch(url, init);
      statuses.push(response.status);
      if (init.method === 'GET') drop.resumeStatus = response.status;
      return response;
    }
    const after = drop.after;
    drop.after = null;
    const abort = new AbortController();
    const response = await fetch(url, { ...init, signal: abort.signal });
    statuses.push(response.status);
    const reader = response.body.getReader();
    let seen = 0;
    const body = new ReadableStream({
      async pull(controller) {
        if (seen >= after) {
          drop.dropped = true;
          abort.abort(); // the socket closes: the server sees the client go away
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

async function vercelCell(cell) {
  const ai = await sdk(cell.sdk ?? 'ai');
  const Chat = chatClass(ai);
  const statuses = [];
  const errors = [];
  const drop = { after: null, dropped: false, resumeStatus: null };
  const chat = new Chat({
    id: cell.chatId,
    transport: new ai.DefaultChatTransport({
      api: cell.url,
      fetch: vercelFetch(statuses, drop),
      prepareSendMessagesRequest: cell.lastOnly
        ? ({ id, messages, trigger, messageId }) => ({ body: { id, messages: messages.slice(-1), trigger, messageId } })
        : undefined,
    }),
    onError: (e) => errors.push(String(e?.message ?? e)),
    ...(cell.auto
      ? {
          sendAutomaticallyWhen: ai.lastAssistantMessageIsCompleteWithToolCalls,
          onToolCall: ({ toolCall }) => {
            if (toolCall.toolName === 'get_local_time') {
              chat.addToolOutput({ tool: 'get_local_time', toolCallId: toolCall.toolCallId, output: 'noon' });
            }
          },
        }
      : {}),
  });
  const steps = [];
  for (const step of cell.steps) {
    errors.length = 0;
    const record = { op: step.op };
    if (step.op === 'send') {
      await chat.sendMessage({ text: step.text });
      if (cell.auto) {
        // The automatic turn starts once the client tool's output is in: wait for the answer that uses it (or
        // for the error that refused it).
        const answered = () => chat.messages.at(-1)?.parts.some((p) => p.type === 'text' && p.text.includes('noon'));
        await until(() => chat.status === 'error' || (chat.status === 'ready' && answered()), 'the automatic turn');
      }
    } else if (step.op === 'tool-output') {
      const part = toolParts(chat).find((p) => p.state === 'input-available');
      if (!part) throw new Error('no tool call is waiting for the client');
      await chat.addToolOutput({ tool: part.type.slice('tool-'.length), toolCallId: part.toolCallId, output: step.output });
      await chat.sendMessage();
    } else if (step.op === 'answer') {
      const part = waitingForApproval(chat);
      if (part.approval) {
        await chat.addToolApprovalResponse({ id: part.approval.id, approved: step.approved, reason: step.reason });
      } else {
        const output = step.reason === undefined ? { approved: step.approved } : { approved: step.approved, reason: step.reason };
        await chat.addToolOutput({ tool: part.type.slice('tool-'.length), toolCallId: part.toolCallId, output });
      }
      await chat.sendMessage();
    } else if (step.op === 'send-and-drop') {
      drop.after = step.dropAfter;
      await chat.sendMessage({ text: step.text });
      record.dropped = drop.dropped;
    } else if (step.op === 'resume') {
      await chat.resumeStream();
      record.resumeStatus = drop.resumeStatus;
    } else if (step.op === 'stored') {
      record.stored = await storedMessages(`${cell.url}/${encodeURIComponent(cell.chatId)}`, statuses);
    } else {
      throw new Error(`unknown step ${step.op}`);
    }
    if (chat.error) errors.push(String(chat.error.message ?? chat.error));
    const checked = await ai.safeValidateUIMessages({ messages: chat.messages });
    Object.assign(record, {
      status: chat.status,
      error: errors[0] ?? null,
      errors: [...errors],
      valid: checked.success ? true : String(checked.error?.message ?? checked.error).slice(0, 500),
      messages: structuredClone(chat.messages),
    });
    steps.push(record);
  }
  return { steps, statuses };
}

// ------------------------------------------------------------------------------------------------------- AG-UI

const TOOLS = [
  {
    name: 'get_local_time',
    description: "The browser's local time",
    parameters: { type: 'object', properties: { timezone: { type: 'string' } } },
  },
];
let counter = 0;
const nextId = (prefix) => `${prefix}_${process.pid}_${++counter}`;

const unanswered = (messages) => {
  const answered = new Set(messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
  return messages.flatMap((m) => (m.toolCalls ?? []).filter((c) => !answered.has(c.id)));
};

function agent(cell, statuses, session) {
  const made = new HttpAgent({
    url: cell.url,
    threadId: cell.chatId,
    fetch: async (url, init) => {
      // A reloaded page asks for the stream in flight instead of starting a run.
      const response = session.replay
        ? await fetch(`${url}/${encodeURIComponent(cell.chatId)}/stream`)
        : await fetch(url, init);
      statuses.push(response.status);
      return response;
    },
  });
  made.use((input, next) => {
    const source$ = next.run(input);
    const Obs = source$.constructor;
    return new Obs((sub) =>
      source$.subscribe({
        next: (e) => { session.wire.push(e); sub.next(e); },
        error: (err) => sub.error(err),
        complete: () => sub.complete(),
      }),
    );
  });
  return made;
}

async function aguiCell(cell) {
  const statuses = [];
  const session = { wire: [], replay: false };
  let client = agent(cell, statuses, session);
  const steps = [];
  for (const step of cell.steps) {
    session.wire = [];
    const record = { op: step.op };
    const params = { runId: nextId('run'), tools: TOOLS };
    let subscriber = {};
    let run = true;
    if (step.op === 'send') {
      client.addMessage({ id: nextId('user'), role: 'user', content: step.text });
    } else if (step.op === 'tool-output') {
      for (const call of unanswered(client.messages)) {
        client.addMessage({ id: nextId('tool'), role: 'tool', toolCallId: call.id, content: step.output });
      }
    } else if (step.op === 'answer') {
      params.resume = client.pendingInterrupts.map((i) => ({
        interruptId: i.id,
        status: 'resolved',
        payload: step.reason ? { approved: step.approved, reason: step.reason } : { approved: step.approved },
      }));
    } else if (step.op === 'send-and-abort') {
      client.addMessage({ id: nextId('user'), role: 'user', content: step.text });
      let aborted = false;
      subscriber = {
        onTextMessageContentEvent: () => {
          if (!aborted) {
            aborted = true;
            client.abortRun();
          }
        },
      };
    } else if (step.op === 'reload') {
      client = agent(cell, statuses, session);
      session.replay = true;
    } else if (step.op === 'stored') {
      record.stored = await storedMessages(`${cell.url}/${encodeURIComponent(cell.chatId)}`, statuses);
      run = false;
    } else {
      throw new Error(`unknown step ${step.op}`);
    }
    let error = null;
    if (run) {
      try {
        await client.runAgent(params, {
          ...subscriber,
          onRunFailed: ({ error: e }) => { error = String(e?.message ?? e); },
        });
      } catch (e) {
        error = error ?? String(e?.message ?? e);
      }
    }
    if (step.op === 'reload') {
      session.replay = false;
      record.text = client.messages.filter((m) => m.role === 'assistant').map((m) => m.content ?? '').join('');
      const stored = await storedMessages(`${cell.url}/${encodeURIComponent(cell.chatId)}`, statuses);
      if (stored) client.setMessages(stored);
    }
    steps.push(Object.assign(record, {
      error,
      messages: structuredClone(client.messages),
      state: structuredClone(client.state ?? null),
      pendingInterrupts: structuredClone(client.pendingInterrupts ?? []),
      wireEvents: session.wire.map((e) => e.type),
      ...(step.events ? { events: structuredClone(session.wire) } : {}),
      runError: session.wire.find((e) => e.type === 'RUN_ERROR')?.message ?? null,
    }));
  }
  return { steps, statuses };
}

// ------------------------------------------------------------------------------------------------------- the plan

const out = {};
const queue = [...plan.cells];
async function worker() {
  for (let cell = queue.shift(); cell; cell = queue.shift()) {
    try {
      out[cell.id] = await (cell.protocol === 'vercel' ? vercelCell(cell) : aguiCell(cell));
    } catch (e) {
      out[cell.id] = { crashed: String(e?.stack ?? e) };
    }
  }
}
await Promise.all(Array.from({ length: plan.concurrency ?? 8 }, worker));
process.stdout.write(JSON.stringify(out) + '\n');
