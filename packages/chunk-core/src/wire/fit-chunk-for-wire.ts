/**
 * The wire view of one oversized chunk. A single chunk can be larger than the model's context
 * window (a tool that returned a whole file, a pasted log): sent whole, every later request of
 * the tab fails as too long, and no compaction helps, since the chunk comes after its cut. The
 * wire builder sends such a chunk cut to a byte budget with a note saying so; the log keeps it
 * whole. Deterministic, so the cut bytes are the same in every request (the prompt cache holds).
 */
import type { FoldableChunk } from './message-fold';
import { toolResultText } from './tool-result-text';

const encoder = new TextEncoder();

function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** The note that ends a cut text: what was cut and where the whole content is. */
export function wireCutNote(what: string, totalBytes: number, seq: number | undefined): string {
  const where = seq === undefined ? "the tab's log" : `the tab's log at seq ${seq}`;
  return `\n\n[chunklog: this ${what} is ${totalBytes} bytes, more than the model's context allows; only its beginning is shown above. The whole ${what} is kept in ${where}.]`;
}

/** `text` cut to at most `maxBytes` UTF-8 bytes, the note included; never splits a character. */
function cutText(text: string, maxBytes: number, what: string, seq: number | undefined): string {
  const totalBytes = byteLength(text);
  if (totalBytes <= maxBytes) return text;
  const note = wireCutNote(what, totalBytes, seq);
  const budget = Math.max(0, maxBytes - byteLength(note));
  // encodeInto stops before a character that does not fit, so the head is whole characters.
  const { read } = encoder.encodeInto(text, new Uint8Array(budget));
  return `${text.slice(0, read ?? 0)}${note}`;
}

/**
 * The chunk as the model should see it when one chunk may take at most `maxChunkBytes` (UTF-8).
 * Texts and tool results are cut with a note, a tool call's input becomes the note; signed
 * thinking cannot be cut (the signature covers every byte), so an oversized one is left out.
 */
export function fitChunkForWire<Chunk extends FoldableChunk>(
  chunk: Chunk,
  maxChunkBytes: number,
): Chunk {
  switch (chunk.type) {
    case 'text': {
      const text = cutText(chunk.data.text, maxChunkBytes, 'message', chunk.seq);
      return text === chunk.data.text ? chunk : { ...chunk, data: { ...chunk.data, text } };
    }
    case 'tool_result': {
      const full = toolResultText(chunk.data.result);
      const result = cutText(full, maxChunkBytes, 'tool result', chunk.seq);
      return result === full ? chunk : { ...chunk, data: { ...chunk.data, result } };
    }
    case 'tool_call': {
      const json = JSON.stringify(chunk.data.arguments) ?? '';
      const totalBytes = byteLength(json);
      if (totalBytes <= maxChunkBytes) return chunk;
      const note = wireCutNote('tool input', totalBytes, chunk.seq).trim();
      return { ...chunk, data: { ...chunk.data, arguments: { chunklog_cut: note } } };
    }
    case 'thinking': {
      const data = chunk.data;
      const size = 'redacted' in data ? byteLength(data.redacted) : byteLength(data.text);
      return size <= maxChunkBytes ? chunk : { ...chunk, data: { text: '' } };
    }
    default:
      return chunk;
  }
}
