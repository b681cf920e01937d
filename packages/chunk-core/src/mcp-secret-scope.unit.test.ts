import { describe, expect, it } from 'vitest';
import { LOCAL_TENANT_NAME, secretRefusal, serverSecretRefusals } from './mcp-secret-scope';

const secret = 'MCP_SECRET_DOCS_TOKEN';
const url = 'https://mcp.example.com/mcp';

describe('secretRefusal', () => {
  it('lets only the local tenant (auth off) use a secret with no tenant list', () => {
    const environment = { [secret]: 'token' };
    expect(secretRefusal({ secret, tenantName: LOCAL_TENANT_NAME, url, environment })).toBeNull();
    expect(secretRefusal({ secret, tenantName: 'beta', url, environment })).toMatch(
      /not for tenant beta.*MCP_SECRET_DOCS_TOKEN_TENANTS/,
    );
  });

  it('lets the listed tenants use it, every tenant with *, and no one with an empty list', () => {
    const listed = { [`${secret}_TENANTS`]: ' alpha , gamma' };
    expect(secretRefusal({ secret, tenantName: 'alpha', url, environment: listed })).toBeNull();
    expect(secretRefusal({ secret, tenantName: 'gamma', url, environment: listed })).toBeNull();
    expect(secretRefusal({ secret, tenantName: 'beta', url, environment: listed })).toMatch(
      /not for tenant beta/,
    );
    expect(
      secretRefusal({ secret, tenantName: LOCAL_TENANT_NAME, url, environment: listed }),
    ).toMatch(/not for tenant local/);
    const everyone = { [`${secret}_TENANTS`]: '*' };
    expect(secretRefusal({ secret, tenantName: 'beta', url, environment: everyone })).toBeNull();
    const none = { [`${secret}_TENANTS`]: '' };
    expect(secretRefusal({ secret, tenantName: 'alpha', url, environment: none })).toMatch(
      /not for tenant alpha/,
    );
  });

  it('sends it only to the listed origins when it has an origin list', () => {
    const environment = {
      [`${secret}_TENANTS`]: 'alpha',
      [`${secret}_ORIGINS`]: 'https://mcp.example.com,http://127.0.0.1:9000',
    };
    expect(secretRefusal({ secret, tenantName: 'alpha', url, environment })).toBeNull();
    expect(
      secretRefusal({ secret, tenantName: 'alpha', url: 'http://127.0.0.1:9000/x', environment }),
    ).toBeNull();
    expect(
      secretRefusal({ secret, tenantName: 'alpha', url: 'https://evil.example.net/', environment }),
    ).toMatch(/may not be sent to https:\/\/evil\.example\.net.*_ORIGINS/);
    // Same host, another port: another origin.
    expect(
      secretRefusal({ secret, tenantName: 'alpha', url: 'http://127.0.0.1:9001/', environment }),
    ).toMatch(/may not be sent/);
  });

  it("lists the refusals of every secret a server's headers name", () => {
    const environment = { MCP_SECRET_A_TENANTS: 'alpha' };
    const server = {
      url,
      headers: { A: { secret: 'MCP_SECRET_A' }, B: { secret: 'MCP_SECRET_B' } },
    };
    expect(serverSecretRefusals(server, 'alpha', environment)).toEqual([
      expect.stringMatching(/MCP_SECRET_B is not for tenant alpha/),
    ]);
    expect(serverSecretRefusals({ url }, 'beta', environment)).toEqual([]);
  });
});
