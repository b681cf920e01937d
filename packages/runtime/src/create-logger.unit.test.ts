import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, defaultLogger } from './create-logger';

/** A logger writing into an array of parsed lines. */
function capture(settings: Parameters<typeof createLogger>[0]) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger(settings, destination), lines };
}

describe('createLogger', () => {
  it('writes one JSON object per line with the level name, an ISO time, the service and msg', () => {
    const { logger, lines } = capture({ service: 'gateway' });
    logger.info({ tabId: 't1' }, 'turn started');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      service: 'gateway',
      tabId: 't1',
      msg: 'turn started',
    });
    expect(new Date(lines[0]!.time as string).toISOString()).toBe(lines[0]!.time);
  });

  it('drops lines below its level, and everything when silent', () => {
    const info = capture({ service: 'x', level: 'warn' });
    info.logger.info('hidden');
    info.logger.warn('shown');
    expect(info.lines.map((line) => line.msg)).toEqual(['shown']);
    const silent = capture({ service: 'x', level: 'silent' });
    silent.logger.fatal('hidden');
    expect(silent.lines).toEqual([]);
  });

  it('serializes an error with its stack, its code and the messages of its cause chain', () => {
    const { logger, lines } = capture({ service: 'x' });
    const root = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    const error = new Error('append failed', { cause: root });
    logger.error({ err: error, tabId: 't1' }, 'append failed');
    const logged = lines[0]!.err as Record<string, string>;
    expect(logged.type).toBe('Error');
    expect(logged.message).toBe('append failed: connect ECONNREFUSED 127.0.0.1:5432');
    expect(logged.stack).toMatch(/^Error: append failed\n\s+at /);
    expect(logged.stack).toContain('caused by: Error: connect ECONNREFUSED');
    expect(lines[0]).toMatchObject({ tabId: 't1', msg: 'append failed' });
  });

  it('serializes an error logged under `error` the same way', () => {
    const { logger, lines } = capture({ service: 'x' });
    logger.warn({ error: new TypeError('bad') }, 'dropped');
    expect(lines[0]!.error).toMatchObject({ type: 'TypeError', message: 'bad' });
  });

  it('binds a child per component, and per service when the root names none', () => {
    const { logger, lines } = capture({});
    const worker = logger.child({ service: 'agent-worker' });
    worker.child({ component: 'intake' }).info('claimed');
    expect(lines[0]).toMatchObject({
      service: 'agent-worker',
      component: 'intake',
      msg: 'claimed',
    });
    expect(Object.keys(lines[0]!).filter((key) => key === 'service')).toHaveLength(1);
  });
});

describe('defaultLogger', () => {
  it('is one logger per process, made on first use with the default settings', () => {
    const first = defaultLogger();
    expect(defaultLogger()).toBe(first);
    expect(first.level).toBe('info');
  });
});
