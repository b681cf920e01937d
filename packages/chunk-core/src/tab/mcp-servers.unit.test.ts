import { describe, expect, it } from 'vitest';
import { TabConfigSchema } from './tab';

const server = {
  name: 'docs',
  transport: 'http',
  url: 'https://mcp.example.com/mcp',
  headers: { Authorization: { secret: 'MCP_SECRET_DOCS_TOKEN' } },
};

const problems = (config: unknown) => {
  const parsed = TabConfigSchema.safeParse(config);
  return parsed.success ? [] : parsed.error.issues.map((issue) => issue.path.join('.'));
};

describe('a tab config naming MCP servers', () => {
  it('takes Streamable HTTP servers whose headers are secret references', () => {
    expect(TabConfigSchema.parse({ mcpServers: [server] })).toEqual({ mcpServers: [server] });
  });

  it('refuses a stdio server: a tab must not run commands on the worker', () => {
    const parsed = TabConfigSchema.safeParse({
      mcpServers: [{ name: 'shell', transport: 'stdio', command: 'sh' }],
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.message).join()).toMatch(/only "http"/);
  });

  it('refuses a header in clear, a secret outside MCP_SECRET_*, a bad URL or name, and twins', () => {
    expect(
      problems({ mcpServers: [{ ...server, headers: { Authorization: 'Bearer x' } }] }),
    ).toEqual(['mcpServers.0.headers.Authorization']);
    expect(
      problems({
        mcpServers: [{ ...server, headers: { Authorization: { secret: 'DATABASE_URL' } } }],
      }),
    ).toEqual(['mcpServers.0.headers.Authorization.secret']);
    expect(
      problems({
        mcpServers: [
          { ...server, headers: { Authorization: { secret: 'MCP_SECRET_DOCS_TOKEN_TENANTS' } } },
        ],
      }),
    ).toEqual(['mcpServers.0.headers.Authorization.secret']);
    expect(problems({ mcpServers: [{ ...server, url: 'file:///etc/passwd' }] })).toEqual([
      'mcpServers.0.url',
    ]);
    expect(problems({ mcpServers: [{ ...server, name: 'has_underscore' }] })).toEqual([
      'mcpServers.0.name',
    ]);
    expect(problems({ mcpServers: [server, server] })).toEqual(['mcpServers']);
  });
});
