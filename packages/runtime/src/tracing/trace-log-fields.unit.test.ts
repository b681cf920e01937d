import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../create-logger';
import { type MemoryTracing, startMemoryTracing } from '../testing/start-memory-tracing';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger({ service: 'agent-worker' }, destination), lines };
}

describe('log lines and spans', () => {
  it('carry no trace fields while tracing is off', () => {
    const { logger, lines } = capture();
    trace.getTracer('test').startActiveSpan('off', (span) => {
      logger.info('inside a no-op span');
      span.end();
    });
    expect(lines[0]).not.toHaveProperty('trace_id');
  });

  describe('with tracing on', () => {
    let tracing: MemoryTracing;
    beforeAll(async () => {
      tracing = await startMemoryTracing();
    });
    afterAll(() => tracing.shutdown());

    it("name the active span's trace and span ids on a line written inside it", () => {
      const { logger, lines } = capture();
      const ids = trace.getTracer('test').startActiveSpan('turn', (span) => {
        logger.child({ tabId: 't1' }).info('step sealed');
        span.end();
        return span.spanContext();
      });
      logger.info('after the span');
      expect(lines[0]).toMatchObject({
        trace_id: ids.traceId,
        span_id: ids.spanId,
        trace_flags: '01',
        tabId: 't1',
      });
      expect(lines[1]).not.toHaveProperty('trace_id');
    });
  });
});
