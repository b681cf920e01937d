import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { databaseEnv, listenEnv, logEnv, modelEnv, natsEnv } from './env-schema';
import { EnvError, parseEnv } from './parse-env';

const ServiceEnv = z.object({
  ...databaseEnv,
  ...natsEnv,
  ...modelEnv,
  ...logEnv,
  ...listenEnv({ port: 8080 }),
});

const valid = {
  DATABASE_URL: 'postgres://postgres@db:5432/chunklog',
  NATS_URL: 'nats://nats:4222',
};

describe('parseEnv', () => {
  it('fills the defaults of every piece', () => {
    expect(parseEnv(ServiceEnv, valid)).toEqual({
      ...valid,
      NATS_URL: ['nats://nats:4222'],
      NATS_STREAM_REPLICAS: 1,
      MODEL: 'claude-sonnet-4-6',
      MAX_STEPS: 25,
      MAX_TOKENS: 4096,
      APPROVAL_TOOLS: 'none',
      LOG_LEVEL: 'info',
      PORT: 8080,
      HOST: '127.0.0.1',
    });
  });

  it('reads numbers and treats values set but empty as unset', () => {
    const env = parseEnv(ServiceEnv, {
      ...valid,
      PORT: '0',
      MAX_STEPS: '3',
      NATS_SUBJECT_PREFIX: '',
    });
    expect(env).toMatchObject({ PORT: 0, MAX_STEPS: 3 });
    expect(env.NATS_SUBJECT_PREFIX).toBeUndefined();
  });

  it("reads a NATS cluster's servers from a comma-separated NATS_URL", () => {
    const env = parseEnv(ServiceEnv, {
      ...valid,
      NATS_URL: 'nats://nats-1:4222, nats://nats-2:4222,nats://nats-3:4222',
      NATS_STREAM_REPLICAS: '3',
    });
    expect(env.NATS_URL).toEqual([
      'nats://nats-1:4222',
      'nats://nats-2:4222',
      'nats://nats-3:4222',
    ]);
    expect(env.NATS_STREAM_REPLICAS).toBe(3);
  });

  it('names every problem in one error', () => {
    const parse = () =>
      parseEnv(ServiceEnv, {
        DATABASE_URL: 'mysql://db',
        PORT: 'many',
        LOG_LEVEL: 'loud',
        MAX_TOKENS: '0',
      });
    expect(parse).toThrow(EnvError);
    let problems: readonly string[] = [];
    try {
      parse();
    } catch (error) {
      problems = (error as EnvError).problems;
    }
    expect(problems.map((problem) => problem.split(':')[0]).sort()).toEqual([
      'DATABASE_URL',
      'LOG_LEVEL',
      'MAX_TOKENS',
      'NATS_URL',
      'PORT',
    ]);
    expect(problems).toContain('DATABASE_URL: must be a postgres:// URL');
    expect(problems).toContain('NATS_URL: required, e.g. nats://127.0.0.1:4222');
  });

  it('says a missing DATABASE_URL is required', () => {
    expect(() => parseEnv(ServiceEnv, { NATS_URL: 'nats://x' })).toThrow(
      'DATABASE_URL: required: a postgres:// URL',
    );
  });

  it('takes postgresql:// as well as postgres://', () => {
    const env = parseEnv(ServiceEnv, { ...valid, DATABASE_URL: 'postgresql://u@h/d' });
    expect(env.DATABASE_URL).toBe('postgresql://u@h/d');
  });
});
