import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  isLoopbackHost,
  mcpTabHostsOf,
  parseAllInOneConfig,
  pgliteTemplatesFolder,
} from './all-in-one-config';

describe('parseAllInOneConfig', () => {
  it('starts on defaults with no configuration', () => {
    expect(parseAllInOneConfig({})).toMatchObject({
      PORT: 8787,
      HOST: '127.0.0.1',
      DATA_DIR: '.data',
      MODEL: 'claude-sonnet-4-6',
      MAX_STEPS: 25,
    });
  });

  it('treats values set but empty as unset', () => {
    const config = parseAllInOneConfig({ ANTHROPIC_API_KEY: '', API_KEYS: '', PORT: '' });
    expect(config.ANTHROPIC_API_KEY).toBeUndefined();
    expect(config.API_KEYS).toBeUndefined();
    expect(config.PORT).toBe(8787);
  });

  it('reads CORS_ORIGINS as the gateway does', () => {
    expect(parseAllInOneConfig({}).CORS_ORIGINS).toBeUndefined();
    expect(parseAllInOneConfig({ CORS_ORIGINS: 'http://localhost:5173' }).CORS_ORIGINS).toEqual([
      'http://localhost:5173',
    ]);
    expect(() => parseAllInOneConfig({ CORS_ORIGINS: 'localhost:5173' })).toThrow(/CORS_ORIGINS/);
  });

  it('names every bad value in one error', () => {
    expect(() => parseAllInOneConfig({ PORT: 'many', MAX_STEPS: '0' })).toThrow(
      /PORT[\s\S]*MAX_STEPS|MAX_STEPS[\s\S]*PORT/,
    );
  });
});

describe('mcpTabHostsOf', () => {
  it("opens loopback to tabs' MCP servers with auth off only", () => {
    expect(mcpTabHostsOf(parseAllInOneConfig({}))).toEqual(['*', '127.0.0.0/8', '::1']);
    expect(mcpTabHostsOf(parseAllInOneConfig({ MCP_TAB_HOSTS: 'mcp.example.com' }))).toEqual([
      'mcp.example.com',
      '127.0.0.0/8',
      '::1',
    ]);
    expect(mcpTabHostsOf(parseAllInOneConfig({ API_KEYS: 'me:secret' }))).toEqual(['*']);
  });
});

describe('isLoopbackHost', () => {
  it('accepts loopback names and addresses only', () => {
    expect(['127.0.0.1', '127.1.2.3', 'localhost', '::1'].map(isLoopbackHost)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['0.0.0.0', '192.168.1.5', '::', 'example.com'].map(isLoopbackHost)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('pgliteTemplatesFolder', () => {
  it('is PGLITE_TEMPLATE_DIR when set', () => {
    const config = parseAllInOneConfig({
      PGLITE_TEMPLATE_DIR: '/var/cache/t',
      XDG_CACHE_HOME: '/x',
    });
    expect(pgliteTemplatesFolder(config)).toBe('/var/cache/t');
  });

  it('is null for off: every new data folder runs initdb', () => {
    expect(pgliteTemplatesFolder(parseAllInOneConfig({ PGLITE_TEMPLATE_DIR: 'off' }))).toBeNull();
  });

  it('is chunklog/ in XDG_CACHE_HOME, else in ~/.cache', () => {
    expect(pgliteTemplatesFolder(parseAllInOneConfig({ XDG_CACHE_HOME: '/x' }))).toBe(
      '/x/chunklog',
    );
    expect(pgliteTemplatesFolder(parseAllInOneConfig({}))).toBe(
      join(homedir(), '.cache', 'chunklog'),
    );
  });
});
