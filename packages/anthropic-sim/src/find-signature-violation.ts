import type { RequestViolation } from '@chunklog/chunk-core';
import type { MessagesRequest } from './messages-request';
import type { ThinkingSigner } from './thinking-signer';

/**
 * Every thinking block replayed in the history must carry the signature this simulator gave
 * it: a changed text or signature is what the real API rejects with "Invalid signature in
 * thinking block". Redacted thinking is opaque and never produced here, so it passes as is.
 */
export function findSignatureViolation(
  request: MessagesRequest,
  signer: ThinkingSigner,
): RequestViolation | undefined {
  for (const [messageIndex, message] of request.messages.entries()) {
    if (typeof message.content === 'string' || message.role !== 'assistant') continue;
    for (const [blockIndex, block] of message.content.entries()) {
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
