// node_chat.mjs: the `ai@7` `Chat` for plain Node (no React): `AbstractChat` over a state of plain arrays, cloned
// on write so the chat's streaming state never aliases what a driver reads back. Imported by the drivers here.
import { AbstractChat } from 'ai';

class PlainChatState {
  status = 'ready';
  error = undefined;
  messages = [];
  constructor(messages = []) { this.messages = messages; }
  pushMessage = (m) => { this.messages = this.messages.concat(structuredClone(m)); };
  popMessage = () => { this.messages = this.messages.slice(0, -1); };
  replaceMessage = (i, m) => {
    this.messages = [...this.messages.slice(0, i), structuredClone(m), ...this.messages.slice(i + 1)];
  };
  snapshot = (v) => structuredClone(v);
}

export class NodeChat extends AbstractChat {
  constructor({ messages, ...init }) {
    super({ ...init, state: new PlainChatState(messages) });
  }
}
