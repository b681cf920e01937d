/**
 * Which tenants' tabs may use an MCP secret (`<secret>_TENANTS`: names or `*`; none under auth
 * when unset), and on which server origins (`<secret>_ORIGINS`, optional), so a tenant cannot
 * have the worker send another's credential to a server it picks. The deployment's own servers
 * (MCP_SERVERS) are not scoped: the operator wrote them.
 */
export const SECRET_TENANTS_SUFFIX = '_TENANTS';
export const SECRET_ORIGINS_SUFFIX = '_ORIGINS';

/**
 * The name of the tenant every request acts as on a gateway without auth (the all-in-one
 * without API_KEYS): that deployment's `unlistedSecretsTenant`.
 */
export const LOCAL_TENANT_NAME = 'local';

/** A secret's scope variables end so; they are never secrets themselves. */
export function isSecretScopeVariable(name: string): boolean {
  return name.endsWith(SECRET_TENANTS_SUFFIX) || name.endsWith(SECRET_ORIGINS_SUFFIX);
}

/**
 * Who may use a secret: the tab's tenant, the environment its scope is read from, and the
 * tenant that may use a secret without a `<secret>_TENANTS` list: the one tenant of a
 * deployment without auth (LOCAL_TENANT_NAME), null under auth, where such a secret is refused
 * to every tenant.
 */
export interface SecretScopeInput {
  tenantName: string;
  environment: Readonly<Record<string, string | undefined>>;
  unlistedSecretsTenant: string | null;
}

/**
 * Why a tenant's tab may not send a secret to a server URL, or null when it may. Reads the
 * scope from `environment` at every call, as the secret itself is read.
 */
export function secretRefusal(
  input: SecretScopeInput & { secret: string; url: string },
): string | null {
  const { secret, tenantName, environment, unlistedSecretsTenant } = input;
  const tenantsVariable = `${secret}${SECRET_TENANTS_SUFFIX}`;
  const tenants = listOf(environment[tenantsVariable]);
  if (tenants === null) {
    if (unlistedSecretsTenant === null) {
      return `secret ${secret} is not for tenant ${tenantName}: ${tenantsVariable} is not set, and with auth a secret is only for the tenants it lists (set it to tenant names, or * for every tenant)`;
    }
    if (tenantName !== unlistedSecretsTenant) {
      return `secret ${secret} is not for tenant ${tenantName}: without ${tenantsVariable} it is for tenant ${unlistedSecretsTenant} only`;
    }
  } else if (!tenants.includes('*') && !tenants.includes(tenantName)) {
    return `secret ${secret} is not for tenant ${tenantName} (${tenantsVariable})`;
  }
  const originsVariable = `${secret}${SECRET_ORIGINS_SUFFIX}`;
  const origins = listOf(environment[originsVariable]);
  if (origins !== null) {
    const origin = originOf(input.url);
    if (origin === null || !origins.includes(origin)) {
      return `secret ${secret} may not be sent to ${origin ?? input.url} (${originsVariable})`;
    }
  }
  return null;
}

/** The refusals of every secret an MCP server's headers name, for one tenant. */
export function serverSecretRefusals(
  server: { url: string; headers?: Readonly<Record<string, { secret: string }>> },
  scope: SecretScopeInput,
): string[] {
  const refusals: string[] = [];
  for (const { secret } of Object.values(server.headers ?? {})) {
    const refusal = secretRefusal({ ...scope, secret, url: server.url });
    if (refusal !== null) refusals.push(refusal);
  }
  return refusals;
}

function listOf(value: string | undefined): string[] | null {
  if (value === undefined) return null;
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}
