import type Anthropic from '@anthropic-ai/sdk';
import type { Chunk, TabConfig } from '@chunklog/chunk-core';

type Block = Anthropic.ContentBlockParam;
type Message = { role: 'user' | 'assistant'; content: Block[] };

const ephemeral = { type: 'ephemeral' } as const;

function scrubId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, '_');
}

function resultContent(result: unknown): string {
  const text = typeof result === 'string' ? result : JSON.stringify(result ?? null);
  // An empty tool_result text is fine for the API, but a blank one says nothing to the model.
  return text === undefined || text.trim() === '' ? '(no output)' : text;
}

/**
 * Folds a tab's log (seq order) into request messages, per DESIGN section 9: per step one
 * assistant message (thinking, text, tool_use in seq order), then one user message with the
 * step's tool results first and interrupt text after them; system and error chunks are skipped.
 * Each block depends only on its own chunk, so earlier steps serialize byte-identically.
 */
export function foldLogToMessages(log: readonly Chunk[]): Message[] {
  const messages: Message[] = [];
  const into = (role: Message['role']): Message => {
    const last = messages.at(-1);
    if (last && last.role === role) return last;
    const message: Message = { role, content: [] };
    messages.push(message);
    return message;
  };
  for (const chunk of log) {
    switch (chunk.type) {
      case 'text': {
        if (chunk.data.text.trim() === '') break;
        into(chunk.role).content.push({ type: 'text', text: chunk.data.text });
        break;
      }
      case 'thinking': {
        const data = chunk.data;
        if ('redacted' in data) {
          into('assistant').content.push({ type: 'redacted_thinking', data: data.redacted });
        } else if (data.signature) {
          into('assistant').content.push({
            type: 'thinking',
            thinking: data.text,
            signature: data.signature,
          });
        }
        // Unsigned thinking was cut off mid-stream: the API would reject it, so it is dropped.
        break;
      }
      case 'tool_call':
        into('assistant').content.push({
          type: 'tool_use',
          id: scrubId(chunk.data.callId),
          name: chunk.data.name,
          input: chunk.data.arguments,
        });
        break;
      case 'tool_result': {
        const message = into('user');
        const block: Block = {
          type: 'tool_result',
          tool_use_id: scrubId(chunk.data.callId),
          content: resultContent(chunk.data.result),
          ...(chunk.data.isError ? { is_error: true } : {}),
        };
        // Tool results go first in their user message, ahead of any interrupt text.
        const firstOther = message.content.findIndex((existing) => existing.type !== 'tool_result');
        if (firstOther === -1) message.content.push(block);
        else message.content.splice(firstOther, 0, block);
        break;
      }
      case 'system':
      case 'error':
        break;
      default: {
        const unexpected: never = chunk;
        void unexpected;
      }
    }
  }
  return answerDanglingCalls(messages);
}

/** Every tool_use needs its tool_result in the very next user message: synthesize missing ones. */
function answerDanglingCalls(messages: Message[]): Message[] {
  const result: Message[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    result.push(message);
    if (message.role !== 'assistant') continue;
    const callIds = message.content.flatMap((block) =>
      block.type === 'tool_use' ? [block.id] : [],
    );
    if (callIds.length === 0) continue;
    let next = messages[index + 1] ?? { role: 'user', content: [] };
    if (next.role !== 'user') next = { role: 'user', content: [] };
    const answered = new Set(
      next.content.flatMap((block) => (block.type === 'tool_result' ? [block.tool_use_id] : [])),
    );
    const missing = callIds.filter((id) => !answered.has(id));
    if (missing.length === 0) continue;
    next = {
      role: 'user',
      content: [
        ...missing.map(
          (id): Block => ({
            type: 'tool_result',
            tool_use_id: id,
            content: 'The tool call was not answered.',
            is_error: true,
          }),
        ),
        ...next.content,
      ],
    };
    if (messages[index + 1]?.role === 'user') messages[index + 1] = next;
    else messages.splice(index + 1, 0, next);
  }
  return result;
}

/**
 * The request for a tab's next step: tools, system and the folded log, with at most four
 * cache breakpoints: the tools, the system prompt, and a rolling pair on the last two user
 * messages, so every step reads the previous step's prefix and writes a longer one.
 */
export function buildStepRequest(input: {
  log: readonly Chunk[];
  config: TabConfig;
  defaults: { model: string; maxTokens: number };
  tools: Anthropic.Tool[];
}): Anthropic.MessageCreateParamsNonStreaming {
  const { config, defaults } = input;
  const maxTokens = config.maxTokens ?? defaults.maxTokens;
  const messages = foldLogToMessages(input.log).map((message) => ({
    role: message.role,
    content: [...message.content],
  }));
  const userIndexes = messages.flatMap((message, index) =>
    message.role === 'user' ? [index] : [],
  );
  for (const index of userIndexes.slice(-2)) {
    const content = messages[index]!.content;
    const last = content.at(-1);
    if (last && (last.type === 'text' || last.type === 'tool_result')) {
      content[content.length - 1] = { ...last, cache_control: ephemeral };
    }
  }
  const tools = input.tools.map((tool, index) =>
    index === input.tools.length - 1 ? { ...tool, cache_control: ephemeral } : tool,
  );
  const request: Anthropic.MessageCreateParamsNonStreaming = {
    model: config.model ?? defaults.model,
    max_tokens: config.thinking
      ? Math.max(maxTokens, config.thinking.budgetTokens + 1024)
      : maxTokens,
    messages,
  };
  if (tools.length > 0) request.tools = tools;
  if (config.system) {
    request.system = [{ type: 'text', text: config.system, cache_control: ephemeral }];
  }
  if (config.thinking) {
    request.thinking = { type: 'enabled', budget_tokens: config.thinking.budgetTokens };
  }
  return request;
}
