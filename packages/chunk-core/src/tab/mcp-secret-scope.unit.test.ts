import { describe, expect, it } from 'vitest';
import { LOCAL_TENANT_NAME, secretRefusal, serverSecretRefusals } from './mcp-secret-scope';

const secret = 'MCP_SECRET_DOCS_TOKEN';
const url = 'https://mcp.example.com/mcp';
/** A deployment with auth: no tenant may use a secret without a tenant list. */
const authOn = { unlistedSecretsTenant: null };
/** A deployment without auth: its one tenant may. */
const authOff = { unlistedSecretsTenant: LOCAL_TENANT_NAME };

describe('secretRefusal', () => {
  it('lets only the tenant of a deployment without auth use a secret with no tenant list', () => {
    const environment = { [secret]: 'token' };
    expect(
      secretRefusal({ secret, tenantName: LOCAL_TENANT_NAME, url, environment, ...authOff }),
    ).toBeNull();
    expect(secretRefusal({ secret, tenantName: 'beta', url, environment, ...authOff })).toMatch(
      /not for tenant beta: without MCP_SECRET_DOCS_TOKEN_TENANTS it is for tenant local only/,
    );
  });

  it('refuses a secret with no tenant list to every tenant under auth, a tenant named local too', () => {
    const environment = { [secret]: 'token' };
    for (const tenantName of [LOCAL_TENANT_NAME, 'alpha']) {
      expect(secretRefusal({ secret, tenantName, url, environment, ...authOn })).toBe(
        `secret MCP_SECRET_DOCS_TOKEN is not for tenant ${tenantName}: MCP_SECRET_DOCS_TOKEN_TENANTS is not set, and with auth a secret is only for the tenants it lists (set it to tenant names, or * for every tenant)`,
      );
    }
    const listed = { ...environment, [`${secret}_TENANTS`]: LOCAL_TENANT_NAME };
    expect(
      secretRefusal({ secret, tenantName: LOCAL_TENANT_NAME, url, environment: listed, ...authOn }),
    ).toBeNull();
  });

  it('lets the listed tenants use it, every tenant with *, and no one with an empty list', () => {
    const listed = { [`${secret}_TENANTS`]: ' alpha , gamma' };
    for (const scope of [authOn, authOff]) {
      const refusal = (tenantName: string, environment: Record<string, string>) =>
        secretRefusal({ secret, tenantName, url, environment, ...scope });
      expect(refusal('alpha', listed)).toBeNull();
      expect(refusal('gamma', listed)).toBeNull();
      expect(refusal('beta', listed)).toMatch(/not for tenant beta/);
      expect(refusal(LOCAL_TENANT_NAME, listed)).toMatch(/not for tenant local/);
      expect(refusal('beta', { [`${secret}_TENANTS`]: '*' })).toBeNull();
      expect(refusal('alpha', { [`${secret}_TENANTS`]: '' })).toMatch(/not for tenant alpha/);
    }
  });

  it('sends it only to the listed origins when it has an origin list', () => {
    const environment = {
      [`${secret}_TENANTS`]: 'alpha',
      [`${secret}_ORIGINS`]: 'https://mcp.example.com,http://127.0.0.1:9000',
    };
    const refusal = (to: string) =>
      secretRefusal({ secret, tenantName: 'alpha', url: to, environment, ...authOn });
    expect(refusal(url)).toBeNull();
    expect(refusal('http://127.0.0.1:9000/x')).toBeNull();
    expect(refusal('https://evil.example.net/')).toMatch(
      /may not be sent to https:\/\/evil\.example\.net.*_ORIGINS/,
    );
    // Same host, another port: another origin.
    expect(refusal('http://127.0.0.1:9001/')).toMatch(/may not be sent/);
  });

  it("lists the refusals of every secret a server's headers name", () => {
    const environment = { MCP_SECRET_A_TENANTS: 'alpha' };
    const server = {
      url,
      headers: { A: { secret: 'MCP_SECRET_A' }, B: { secret: 'MCP_SECRET_B' } },
    };
    expect(serverSecretRefusals(server, { tenantName: 'alpha', environment, ...authOn })).toEqual([
      expect.stringMatching(
        /MCP_SECRET_B is not for tenant alpha: MCP_SECRET_B_TENANTS is not set/,
      ),
    ]);
    expect(serverSecretRefusals({ url }, { tenantName: 'beta', environment, ...authOn })).toEqual(
      [],
    );
  });
});
