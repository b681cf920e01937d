import { createHash } from 'node:crypto';
import type { CountTokensRequest } from '../request/messages-request';
import { canonicalJson } from './canonical-json';
import type { PromptBlock } from './list-prompt-blocks';

/** `diagnostics.cache_miss_reason`, as the API reports it (the SDK's `BetaCacheMissReason`). */
export type CacheMissReason =
  | { type: 'model_changed'; cache_missed_input_tokens: number }
  | { type: 'system_changed'; cache_missed_input_tokens: number }
  | { type: 'tools_changed'; cache_missed_input_tokens: number }
  | { type: 'messages_changed'; cache_missed_input_tokens: number }
  | { type: 'previous_message_not_found' }
  | { type: 'unavailable' };

/** What the diagnosis compares of a request: each part's digest and its tokens. */
export interface PromptFingerprint {
  model: string;
  tools: string;
  system: string;
  /** thinking and tool_choice: a change there has no reason of its own (`unavailable`). */
  settings: string;
  /** One digest per message, `cache_control` left out (breakpoints move from step to step). */
  messages: string[];
  toolsTokens: number;
  systemTokens: number;
  messageTokens: number[];
}

/** The fingerprints of earlier responses, by message id, and the diagnosis against one. */
export interface CacheDiagnostics {
  record(messageId: string, fingerprint: PromptFingerprint): void;
  /** Why `fingerprint`'s prompt could not reuse all of the earlier one's; null when it could. */
  diagnose(previousMessageId: string, fingerprint: PromptFingerprint): CacheMissReason | null;
}

/** The fingerprint of a request, from its prompt blocks for the token figures. */
export function fingerprintPrompt(
  request: CountTokensRequest,
  blocks: readonly PromptBlock[],
): PromptFingerprint {
  const tokensOf = (segment: PromptBlock['segment']) =>
    blocks.filter((block) => block.segment === segment).reduce((sum, b) => sum + b.tokens, 0);
  const messageTokens = request.messages.map(() => 0);
  for (const block of blocks) {
    if (block.segment !== 'messages') continue;
    const index = Number(block.path.split('.')[1]);
    messageTokens[index] = (messageTokens[index] ?? 0) + block.tokens;
  }
  return {
    model: request.model,
    tools: digest(request.tools ?? []),
    system: digest(request.system ?? ''),
    settings: digest({
      thinking: request.thinking ?? null,
      tool_choice: request.tool_choice ?? null,
    }),
    messages: request.messages.map((message) => digest(message)),
    toolsTokens: tokensOf('tools'),
    systemTokens: tokensOf('system'),
    messageTokens,
  };
}

/**
 * Answers the way the API's cache diagnostics do, from where the prompt diverged: the model,
 * then tools, then system, then an earlier message entry (appending entries is no miss). Keeps
 * the latest `limit` fingerprints; an older id is `previous_message_not_found`.
 */
export function createCacheDiagnostics(limit = 10_000): CacheDiagnostics {
  const fingerprints = new Map<string, PromptFingerprint>();
  return {
    record(messageId, fingerprint) {
      fingerprints.delete(messageId);
      fingerprints.set(messageId, fingerprint);
      if (fingerprints.size > limit) {
        const oldest = fingerprints.keys().next().value;
        if (oldest !== undefined) fingerprints.delete(oldest);
      }
    },
    diagnose(previousMessageId, current) {
      const previous = fingerprints.get(previousMessageId);
      if (previous === undefined) return { type: 'previous_message_not_found' };
      const messagesTokens = previous.messageTokens.reduce((sum, tokens) => sum + tokens, 0);
      const total = previous.toolsTokens + previous.systemTokens + messagesTokens;
      if (previous.model !== current.model) {
        return { type: 'model_changed', cache_missed_input_tokens: total };
      }
      if (previous.tools !== current.tools) {
        return { type: 'tools_changed', cache_missed_input_tokens: total };
      }
      if (previous.system !== current.system) {
        return {
          type: 'system_changed',
          cache_missed_input_tokens: total - previous.toolsTokens,
        };
      }
      if (previous.settings !== current.settings) return { type: 'unavailable' };
      const changed = previous.messages.findIndex(
        (message, index) => current.messages[index] !== message,
      );
      if (changed === -1) return null;
      const missed = previous.messageTokens.slice(changed).reduce((sum, tokens) => sum + tokens, 0);
      return { type: 'messages_changed', cache_missed_input_tokens: missed };
    },
  };
}

function digest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('base64url');
}
