import type { CacheMissReason } from '../prompt-cache/cache-diagnostics';
import type { CacheUsage } from '../prompt-cache/prompt-cache';
import type { StopReason } from './parse-directives';

/** A content block of a simulated reply, as the non-streaming API returns it. */
export type ReplyBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | {
      type: 'tool_use';
      id: string;
      name: string;
      input: Record<string, unknown>;
      caller: { type: 'direct' };
    }
  | {
      type: 'compaction';
      content: string;
      encrypted_content: string;
      signature: string;
      tool_changes: unknown[];
    };

/** `usage` of a finished message, field for field as the real API reports it. */
export interface MessageUsage extends CacheUsage {
  output_tokens: number;
  service_tier: 'standard';
  inference_geo: 'not_available';
}

/** The non-streaming response body of `POST /v1/messages`. */
export interface AssistantMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ReplyBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  stop_details: null;
  usage: MessageUsage;
  /** Why the cache missed against `diagnostics.previous_message_id`; null when not asked. */
  diagnostics?: { cache_miss_reason: CacheMissReason | null } | null;
}
