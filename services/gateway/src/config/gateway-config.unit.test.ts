import { describe, expect, it } from 'vitest';
import { parseApiKeys, parseGatewayConfig } from './gateway-config';

const minimal = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x',
  NATS_URL: 'nats://127.0.0.1:4222',
};

describe('parseGatewayConfig', () => {
  it('applies defaults and treats empty values as unset', () => {
    const config = parseGatewayConfig({ ...minimal, PORT: '', API_KEYS: '' });
    expect(config).toMatchObject({ PORT: 8080, HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    expect(config.API_KEYS).toBeUndefined();
  });

  it('lists every problem at once', () => {
    expect(() => parseGatewayConfig({ PORT: '99999', API_KEYS: 'no-colon' })).toThrow(
      /DATABASE_URL[\s\S]*NATS_URL[\s\S]*PORT[\s\S]*API_KEYS/,
    );
  });
});

describe('CORS_ORIGINS', () => {
  it('is a list of origins, or *, and unset by default', () => {
    expect(parseGatewayConfig(minimal).CORS_ORIGINS).toBeUndefined();
    expect(
      parseGatewayConfig({
        ...minimal,
        CORS_ORIGINS: ' https://chat.example.com , http://localhost:5173',
      }).CORS_ORIGINS,
    ).toEqual(['https://chat.example.com', 'http://localhost:5173']);
    expect(parseGatewayConfig({ ...minimal, CORS_ORIGINS: '*' }).CORS_ORIGINS).toEqual(['*']);
  });

  it('refuses what a browser never sends as an origin, naming it', () => {
    for (const origin of ['https://chat.example.com/', 'chat.example.com', 'ftp://x.example']) {
      expect(() => parseGatewayConfig({ ...minimal, CORS_ORIGINS: origin })).toThrow(
        new RegExp(`CORS_ORIGINS[\\s\\S]*"${origin.replaceAll('.', '\\.')}"`),
      );
    }
  });
});

describe('parseApiKeys', () => {
  it('splits tenant:key pairs, keeping colons inside keys', () => {
    expect(parseApiKeys(' acme:k1 , beta:k:2')).toEqual([
      { tenant: 'acme', key: 'k1' },
      { tenant: 'beta', key: 'k:2' },
    ]);
    expect(parseApiKeys(undefined)).toEqual([]);
  });
});
