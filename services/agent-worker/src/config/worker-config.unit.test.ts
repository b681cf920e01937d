import { describe, expect, it } from 'vitest';
import { defaultRetryPolicy } from '../turn/retry-defaults';
import { webhookDispatchOptions } from '../webhooks/webhook-dispatch-options';
import { modelClientOptions, parseWorkerConfig, retryPolicyOf } from './worker-config';

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
      CONTEXT_WINDOW_TOKENS: 200_000,
      COMPACTION_THRESHOLD: 0.8,
      LOG_LEVEL: 'info',
      MODEL: 'claude-sonnet-4-6',
    });
  });

  it('reads the model retry policy, the defaults when unset', () => {
    const base = {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/chunklog',
      NATS_URL: 'nats://127.0.0.1:4222',
      SIMULATOR_URL: 'http://127.0.0.1:4010',
    };
    expect(retryPolicyOf(parseWorkerConfig(base))).toEqual(defaultRetryPolicy);
    expect(
      retryPolicyOf(
        parseWorkerConfig({
          ...base,
          MODEL_MAX_ATTEMPTS: '3',
          MODEL_RETRY_BASE_MS: '50',
          MODEL_RETRY_MAX_MS: '20',
        }),
      ),
    ).toEqual({ ...defaultRetryPolicy, maxAttempts: 3, baseDelayMs: 50, maxDelayMs: 50 });
    expect(() => parseWorkerConfig({ ...base, MODEL_MAX_ATTEMPTS: '0' })).toThrow(
      /MODEL_MAX_ATTEMPTS/,
    );
  });

  it('serves no metrics unless METRICS_PORT is set, on loopback by default', () => {
    const base = {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/chunklog',
      NATS_URL: 'nats://127.0.0.1:4222',
      SIMULATOR_URL: 'http://127.0.0.1:4010',
    };
    expect(parseWorkerConfig(base).METRICS_PORT).toBeUndefined();
    expect(parseWorkerConfig({ ...base, METRICS_PORT: '' }).METRICS_PORT).toBeUndefined();
    expect(parseWorkerConfig({ ...base, METRICS_PORT: '9464' })).toMatchObject({
      METRICS_PORT: 9464,
      METRICS_HOST: '127.0.0.1',
    });
    expect(() => parseWorkerConfig({ ...base, METRICS_PORT: 'ninety' })).toThrow(/METRICS_PORT/);
    expect(() => parseWorkerConfig({ ...base, METRICS_PORT: '70000' })).toThrow(/METRICS_PORT/);
  });

  it('takes a context window and a compaction threshold within bounds', () => {
    const base = {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/chunklog',
      NATS_URL: 'nats://127.0.0.1:4222',
      SIMULATOR_URL: 'http://127.0.0.1:4010',
    };
    expect(
      parseWorkerConfig({ ...base, CONTEXT_WINDOW_TOKENS: '1000000', COMPACTION_THRESHOLD: '0.5' }),
    ).toMatchObject({ CONTEXT_WINDOW_TOKENS: 1_000_000, COMPACTION_THRESHOLD: 0.5 });
    expect(() => parseWorkerConfig({ ...base, COMPACTION_THRESHOLD: '1' })).toThrow(
      /COMPACTION_THRESHOLD/,
    );
    expect(() => parseWorkerConfig({ ...base, CONTEXT_WINDOW_TOKENS: 'big' })).toThrow(
      /CONTEXT_WINDOW_TOKENS/,
    );
  });

  it('lists every problem at once', () => {
    let message = '';
    try {
      parseWorkerConfig({ MAX_STEPS: '0', LOG_LEVEL: 'loud' });
    } catch (error) {
      message = (error as Error).message;
    }
    for (const problem of [
      /DATABASE_URL: required/,
      /NATS_URL: required/,
      /ANTHROPIC_API_KEY: required/,
      /MAX_STEPS: /,
      /LOG_LEVEL: /,
    ]) {
      expect(message).toMatch(problem);
    }
  });

  it('uses the simulator when no API key is given, and the real API when one is', () => {
    const base = {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/chunklog',
      NATS_URL: 'nats://127.0.0.1:4222',
      SIMULATOR_URL: 'http://sim:4010',
    };
    expect(modelClientOptions(parseWorkerConfig({ ...base, ANTHROPIC_API_KEY: '' }))).toEqual({
      apiKey: 'simulator',
      baseURL: 'http://sim:4010',
    });
    expect(modelClientOptions(parseWorkerConfig({ ...base, ANTHROPIC_API_KEY: 'sk-1' }))).toEqual({
      apiKey: 'sk-1',
    });
    expect(() => parseWorkerConfig({ ...base, SIMULATOR_URL: '' })).toThrow(
      /ANTHROPIC_API_KEY: required/,
    );
  });

  it('reads MCP_SERVERS as a JSON list of servers, names what is wrong with one, and MCP_TAB_HOSTS', () => {
    const base = {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/chunklog',
      NATS_URL: 'nats://127.0.0.1:4222',
      SIMULATOR_URL: 'http://127.0.0.1:4010',
    };
    expect(parseWorkerConfig(base).MCP_SERVERS).toBeUndefined();
    expect(parseWorkerConfig(base).MCP_TAB_HOSTS).toEqual(['*']);
    expect(
      parseWorkerConfig({ ...base, MCP_TAB_HOSTS: 'mcp.example.com, *.tools.example.com' })
        .MCP_TAB_HOSTS,
    ).toEqual(['mcp.example.com', '*.tools.example.com']);
    const servers = [
      {
        name: 'docs',
        transport: 'http',
        url: 'https://mcp.example.com/mcp',
        headers: { Authorization: { secret: 'MCP_SECRET_DOCS' } },
      },
      { name: 'files', transport: 'stdio', command: 'node', args: ['server.js'] },
    ];
    expect(
      parseWorkerConfig({ ...base, MCP_SERVERS: JSON.stringify(servers) }).MCP_SERVERS,
    ).toEqual(servers);
    expect(() => parseWorkerConfig({ ...base, MCP_SERVERS: '[{' })).toThrow(
      /MCP_SERVERS: must be a JSON list of MCP servers/,
    );
    const clearSecret = [{ ...servers[0], headers: { Authorization: 'Bearer abc' } }];
    expect(() => parseWorkerConfig({ ...base, MCP_SERVERS: JSON.stringify(clearSecret) })).toThrow(
      /MCP_SERVERS\.0\.headers\.Authorization/,
    );
    const twice = [servers[1], servers[1]];
    expect(() => parseWorkerConfig({ ...base, MCP_SERVERS: JSON.stringify(twice) })).toThrow(
      /MCP server names must be unique/,
    );
  });

  it('reads the webhook dispatcher settings, with a day of retries by default', () => {
    const base = {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/chunklog',
      NATS_URL: 'nats://127.0.0.1:4222',
      SIMULATOR_URL: 'http://127.0.0.1:4010',
    };
    expect(webhookDispatchOptions(parseWorkerConfig(base))).toEqual({
      pollMs: 1_000,
      attemptTimeoutMs: 10_000,
      backoff: { baseMs: 5_000, maxMs: 3_600_000 },
      maxAgeMs: 86_400_000,
      retentionMs: 604_800_000,
      allowedHosts: [],
    });
    const configured = parseWorkerConfig({
      ...base,
      WEBHOOK_ATTEMPT_TIMEOUT_MS: '2500',
      WEBHOOK_RETRY_BASE_MS: '100',
      WEBHOOK_RETRY_MAX_MS: '60000',
      WEBHOOK_MAX_AGE_MS: '3600000',
      WEBHOOK_POLL_MS: '250',
      WEBHOOK_RETENTION_MS: '86400000',
      WEBHOOK_ALLOWED_HOSTS: 'hooks.internal, 10.0.0.0/8',
    });
    expect(webhookDispatchOptions(configured)).toEqual({
      pollMs: 250,
      attemptTimeoutMs: 2_500,
      backoff: { baseMs: 100, maxMs: 60_000 },
      maxAgeMs: 3_600_000,
      retentionMs: 86_400_000,
      allowedHosts: ['hooks.internal', '10.0.0.0/8'],
    });
    expect(() => parseWorkerConfig({ ...base, WEBHOOK_MAX_AGE_MS: 'a day' })).toThrow(
      /WEBHOOK_MAX_AGE_MS/,
    );
    expect(() => parseWorkerConfig({ ...base, WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/33' })).toThrow(
      /WEBHOOK_ALLOWED_HOSTS/,
    );
  });
});
