import { describe, expect, it } from 'vitest';
import { parseWorkerConfig } from './worker-config';

describe('parseWorkerConfig', () => {
  it('applies defaults and coerces numbers', () => {
    const config = parseWorkerConfig({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/chunklog',
      NATS_URL: 'nats://127.0.0.1:4222',
      ANTHROPIC_API_KEY: 'key',
      MAX_STEPS: '7',
    });
    expect(config).toMatchObject({
      MAX_STEPS: 7,
      LEASE_MS: 15_000,
      LOG_LEVEL: 'info',
      MODEL: 'claude-sonnet-4-6',
    });
  });

  it('lists every problem at once', () => {
    expect(() => parseWorkerConfig({ MAX_STEPS: '0', LOG_LEVEL: 'loud' })).toThrow(
      /DATABASE_URL is required[\s\S]*NATS_URL is required[\s\S]*ANTHROPIC_API_KEY is required[\s\S]*MAX_STEPS[\s\S]*LOG_LEVEL/,
    );
  });
});
