/**
 * The compaction request for a tab: the request its next step would send, cut at the end of the
 * last finished step, with the `compaction` parameter. The same tools, system, model and
 * thinking as the step requests, so it reads their cached prefix.
 */
import { assembleRequest, type RequestOptions } from '../wire/build-request';
import {
  type FoldableChunk,
  isCompactionMessage,
  MessageFold,
  PLACEHOLDER_USER_TEXT,
} from '../wire/message-fold';
import type { WireRequest } from '../wire/wire-types';

/**
 * Where a compaction of `chunks` may cut: the seq of the last chunk it can summarize, or
 * undefined when there is nothing new. The cut never splits a step (one still being written
 * stays after it, whole), so calls and results stay together and the request ends with a user
 * message, as the API requires.
 */
export function findCompactionCut(chunks: readonly FoldableChunk[]): number | undefined {
  let summarized = 0;
  for (const chunk of chunks) {
    if (chunk.type === 'compaction') summarized = Math.max(summarized, chunk.data.throughSeq);
  }
  let end = chunks.length;
  while (end > 0) {
    const prefix = chunks.slice(0, end);
    const stepStart = unfinishedStepStart(prefix);
    if (stepStart === undefined) {
      const cut = lastSeq(prefix);
      const isNew = cut !== undefined && cut > summarized && hasSomethingToSummarize(prefix);
      return isNew ? cut : undefined;
    }
    end = stepStart;
  }
  return undefined;
}

/** A compaction request and the seq its block will cover (the chunk data's `throughSeq`). */
export type CompactionRequest = { request: WireRequest; throughSeq: number };

/**
 * Builds the compaction request for `chunks` (see `findCompactionCut`); undefined when there is
 * nothing to summarize. `instructions` replace the API's summarization prompt. Send it with the
 * `compact-2026-09-04` beta; store the answer with `compactionDataFromResponse(response,
 * throughSeq)` as a `compaction` chunk.
 */
export function buildCompactionRequest(
  options: RequestOptions & { chunks: readonly FoldableChunk[]; instructions?: string },
): CompactionRequest | undefined {
  const throughSeq = findCompactionCut(options.chunks);
  if (throughSeq === undefined) return undefined;
  const fold = new MessageFold(
    options.maxChunkBytes === undefined ? {} : { maxChunkBytes: options.maxChunkBytes },
  );
  for (const chunk of options.chunks) {
    if (chunk.seq !== undefined && chunk.seq > throughSeq) break;
    fold.append(chunk);
  }
  const request = assembleRequest(fold.messages(), options);
  const instructions = options.instructions?.trim();
  request.compaction = instructions
    ? { type: 'summarize', instructions: options.instructions }
    : { type: 'summarize' };
  return { request, throughSeq };
}

/**
 * The index of the first chunk of the last step at the end of `prefix` if that step may not be
 * finished; undefined when it is. A step is known finished when every tool call of it has a
 * result and either it made a call (the results close it) or a user message follows it. A step
 * whose content is last in the log may still be streaming (signed thinking with its text still
 * to come, say), so it is never summarized.
 */
function unfinishedStepStart(prefix: readonly FoldableChunk[]): number | undefined {
  let last = -1;
  for (let index = prefix.length - 1; index >= 0; index -= 1) {
    if (isAssistantContent(prefix[index])) {
      last = index;
      break;
    }
  }
  if (last === -1) return undefined;
  const step = prefix[last];
  let start = last;
  // A compaction appended while the step was written sits inside it: look past it.
  while (
    start > 0 &&
    (prefix[start - 1]?.type === 'compaction' || sameStep(prefix[start - 1], step))
  ) {
    start -= 1;
  }
  while (prefix[start]?.type === 'compaction') start += 1;
  const pending = new Set<string>();
  let madeCalls = false;
  for (const chunk of prefix.slice(start, last + 1)) {
    if (chunk.type === 'tool_call' && sameStep(chunk, step)) {
      pending.add(chunk.data.callId);
      madeCalls = true;
    }
  }
  let userFollows = false;
  for (const chunk of prefix.slice(last + 1)) {
    if (chunk.type === 'tool_result') pending.delete(chunk.data.callId);
    if (chunk.type === 'text' && chunk.role === 'user') userFollows = true;
  }
  const closed = pending.size === 0 && (madeCalls || userFollows);
  const messages = new MessageFold().appendAll(prefix).messages();
  return closed && messages.at(-1)?.role === 'user' ? undefined : start;
}

function isAssistantContent(chunk: FoldableChunk | undefined): boolean {
  if (chunk === undefined) return false;
  return (
    chunk.type === 'thinking' ||
    chunk.type === 'tool_call' ||
    (chunk.type === 'text' && chunk.role === 'assistant')
  );
}

/** Whether `chunk` belongs to the step of `step`, or sits inside it (a notice, a result). */
function sameStep(chunk: FoldableChunk | undefined, step: FoldableChunk | undefined): boolean {
  if (chunk === undefined || step === undefined) return false;
  if (chunk.type === 'compaction') return false;
  if (chunk.type === 'text' && chunk.role === 'user') return false;
  return chunk.turnId === step.turnId && chunk.step === step.step;
}

/** Whether the prefix folds into any message besides a compaction and the placeholder. */
function hasSomethingToSummarize(prefix: readonly FoldableChunk[]): boolean {
  const messages = new MessageFold().appendAll(prefix).messages();
  return messages.some((message) => {
    if (isCompactionMessage(message)) return false;
    const only = message.content.length === 1 ? message.content[0] : undefined;
    return !(only?.type === 'text' && only.text === PLACEHOLDER_USER_TEXT);
  });
}

function lastSeq(prefix: readonly FoldableChunk[]): number | undefined {
  for (let index = prefix.length - 1; index >= 0; index -= 1) {
    const seq = prefix[index]?.seq;
    if (seq !== undefined) return seq;
  }
  return undefined;
}
