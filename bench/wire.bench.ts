/**
 * Wire builder cost for a long tab: building the next request for a 10,000-chunk log from
 * scratch, versus after one more step through a `MessageFold` kept from the previous step.
 */
import {
  assembleRequest,
  buildRequest,
  type Chunk,
  type ChunkBody,
  MessageFold,
  type RequestOptions,
} from '@chunklog/chunk-core';

const CHUNK_COUNT = 10_000;
const RUNS = 31;
const TAB_ID = '00000000-0000-4000-8000-00000000beef';

const options: RequestOptions = {
  model: 'claude-bench',
  maxTokens: 16_384,
  system: 'You are a coding agent. '.repeat(40),
  tools: Array.from({ length: 12 }, (_, index) => ({
    name: `tool_${index}`,
    description: `Tool number ${index}`,
    input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } },
  })),
  thinking: { budgetTokens: 4096 },
};

function uuid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

type Push = (turnId: string, step: number, body: ChunkBody) => void;

/** A push that appends to `chunks` the chunk after the `before` chunks already in the log. */
function pushInto(chunks: Chunk[], before = 0): Push {
  return (turnId, step, body) => {
    const seq = before + chunks.length + 1;
    chunks.push({
      id: uuid(seq),
      tabId: TAB_ID,
      seq,
      turnId,
      step,
      createdAt: seq,
      ...body,
    } as Chunk);
  };
}

/** A realistic agent log: turns of 1-6 steps, each step thinking, text and 1-2 tool calls. */
function makeLog(count: number): Chunk[] {
  const chunks: Chunk[] = [];
  let turn = 0;
  const push = pushInto(chunks);
  while (chunks.length < count) {
    turn += 1;
    const turnId = uuid(10_000_000 + turn);
    push(turnId, 0, {
      type: 'text',
      role: 'user',
      data: { text: `Request ${turn}: please refactor module ${turn}.` },
    });
    const steps = 1 + (turn % 6);
    for (let step = 0; step < steps; step += 1) {
      pushStep(push, turnId, step, `${turn}_${step}`, step < steps - 1);
    }
  }
  return chunks.slice(0, count);
}

function pushStep(push: Push, turnId: string, step: number, tag: string, withTools: boolean): void {
  push(turnId, step, {
    type: 'thinking',
    role: 'assistant',
    data: { text: `Thinking about ${tag}. `.repeat(8), signature: `sig_${tag}_`.repeat(6) },
  });
  push(turnId, step, {
    type: 'text',
    role: 'assistant',
    data: { text: `Working on ${tag}. `.repeat(5) },
  });
  if (!withTools) return;
  const calls = step % 2 === 0 ? 2 : 1;
  for (let call = 0; call < calls; call += 1) {
    push(turnId, step, {
      type: 'tool_call',
      role: 'assistant',
      data: {
        callId: `toolu_${tag}_${call}`,
        name: `tool_${call}`,
        arguments: { path: `src/${tag}.ts` },
      },
    });
  }
  for (let call = 0; call < calls; call += 1) {
    push(turnId, step, {
      type: 'tool_result',
      role: 'tool',
      data: {
        callId: `toolu_${tag}_${call}`,
        name: `tool_${call}`,
        result: `contents of ${tag}\n`.repeat(10),
        isError: false,
      },
    });
  }
}

/** The chunks of one more tool step appended to `log`. */
function nextStep(log: Chunk[]): Chunk[] {
  const last = log.at(-1) as Chunk;
  const extra: Chunk[] = [];
  pushStep(pushInto(extra, log.length), last.turnId, last.step + 1, 'next', true);
  return extra;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export default async function wireBench(): Promise<Record<string, number>> {
  const log = makeLog(CHUNK_COUNT);
  const extra = nextStep(log);
  const grown = log.concat(extra);

  // Warm up the JIT on both paths before measuring.
  for (let run = 0; run < 3; run += 1) buildRequest({ ...options, chunks: grown });

  const full: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    const started = performance.now();
    buildRequest({ ...options, chunks: log });
    full.push(performance.now() - started);
  }

  const incremental: number[] = [];
  const expected = JSON.stringify(buildRequest({ ...options, chunks: grown }));
  for (let run = 0; run < RUNS; run += 1) {
    const fold = new MessageFold().appendAll(log);
    assembleRequest(fold.messages(), options); // the previous step's request, built before timing
    const started = performance.now();
    const request = assembleRequest(fold.appendAll(extra).messages(), options);
    incremental.push(performance.now() - started);
    if (run === 0 && JSON.stringify(request) !== expected) {
      throw new Error('the incremental request differs from the full build');
    }
  }

  const fullMs = median(full);
  const incrementalMs = median(incremental);
  return {
    'wire.full_ms': fullMs,
    'wire.incremental_ms': incrementalMs,
    'wire.incremental_over_full': incrementalMs / fullMs,
  };
}
