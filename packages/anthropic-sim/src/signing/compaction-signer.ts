import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../prompt-cache/canonical-json';

/** The fields of a compaction block the signature covers. */
export interface SignedCompaction {
  content: string;
  encrypted_content?: string | null;
  tool_changes?: unknown[] | null;
}

/** The API's refusals of a replayed compaction block that does not verify. */
export type CompactionSignatureRefusal =
  | 'compaction_signature_invalid'
  | 'compaction_content_mismatch'
  | 'compaction_tool_changes_mismatch';

/** Signs compaction blocks and says why a replayed one does not verify. */
export interface CompactionSigner {
  sign(block: SignedCompaction): string;
  /** The API's refusal for a replayed block, or undefined when it verifies. */
  check(
    block: SignedCompaction & { signature?: string | null },
  ): CompactionSignatureRefusal | undefined;
}

/**
 * A signature records digests of the block's content, tool changes and encrypted content,
 * HMAC-SHA256 over them under the simulator's key: `<payload>.<mac>`, both base64url. So the
 * simulator, like the API, tells a signature it did not make (or that was changed) from one
 * that verifies but was sent with a changed content or changed tool changes.
 */
export function createCompactionSigner(secret: Buffer | string): CompactionSigner {
  const mac = (payload: string) =>
    createHmac('sha256', secret).update(`compaction:${payload}`).digest('base64url');
  const digests = (block: SignedCompaction) => ({
    content: digest(block.content),
    toolChanges: digest(canonicalJson(block.tool_changes ?? [])),
    encrypted: digest(block.encrypted_content ?? ''),
  });
  return {
    sign(block) {
      const payload = Buffer.from(JSON.stringify(digests(block))).toString('base64url');
      return `${payload}.${mac(payload)}`;
    },
    check(block) {
      const [payload, tag, ...rest] = (block.signature ?? '').split('.');
      if (payload === undefined || tag === undefined || rest.length > 0) {
        return 'compaction_signature_invalid';
      }
      const expected = Buffer.from(mac(payload));
      const given = Buffer.from(tag);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
        return 'compaction_signature_invalid';
      }
      let recorded: ReturnType<typeof digests>;
      try {
        recorded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        return 'compaction_signature_invalid';
      }
      const actual = digests(block);
      if (recorded.content !== actual.content) return 'compaction_content_mismatch';
      if (recorded.toolChanges !== actual.toolChanges) return 'compaction_tool_changes_mismatch';
      // The encrypted content is opaque to clients; a changed one is a signature that fails.
      if (recorded.encrypted !== actual.encrypted) return 'compaction_signature_invalid';
      return undefined;
    },
  };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
