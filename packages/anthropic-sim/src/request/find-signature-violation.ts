import type { CompactionSignatureRefusal, CompactionSigner } from '../signing/compaction-signer';
import type { ThinkingSigner } from '../signing/thinking-signer';
import type { CountTokensRequest } from './messages-request';
import type { RequestViolation } from './validate-request';

const compactionMessages: Record<CompactionSignatureRefusal, string> = {
  compaction_signature_invalid: "The `compaction` block's `signature` does not verify.",
  compaction_content_mismatch:
    "The `compaction` block's `content` differs from the text its `signature` recorded.",
  compaction_tool_changes_mismatch:
    "The `compaction` block's `tool_changes` differs from what was returned with the block.",
};

/**
 * Every thinking block replayed in the history must carry the signature this simulator gave
 * it: a changed text or signature is what the real API rejects with "Invalid signature in
 * thinking block". Redacted thinking is opaque and never produced here, so it passes as is.
 * A compaction block with content must carry this simulator's signature over its content,
 * tool changes and encrypted content (null content is a no-op and is not checked).
 */
export function findSignatureViolation(
  request: CountTokensRequest,
  signer: ThinkingSigner,
  compactionSigner: CompactionSigner,
): RequestViolation | undefined {
  for (const [messageIndex, message] of request.messages.entries()) {
    if (typeof message.content === 'string') continue;
    for (const [blockIndex, block] of message.content.entries()) {
      if (block.type === 'compaction' && typeof block.content === 'string') {
        const code = compactionSigner.check({ ...block, content: block.content });
        if (code === undefined) continue;
        return {
          path: `messages.${messageIndex}.content.${blockIndex}`,
          message: compactionMessages[code],
          code,
        };
      }
      if (message.role !== 'assistant') continue;
      if (block.type !== 'thinking') continue;
      if (!signer.verify(block.thinking, block.signature)) {
        return {
          path: `messages.${messageIndex}.content.${blockIndex}`,
          message: 'Invalid signature in thinking block',
        };
      }
    }
  }
  return undefined;
}
