import {
  type McpHttpServer,
  type McpServer,
  serverSecretRefusals,
  type TabConfig,
} from '@chunklog/chunk-core';
import {
  isRefusedHost,
  namesHost,
  parseOutboundAllowlist,
} from '@chunklog/runtime/outbound-address';
import type { Logger } from 'pino';
import { guardedDispatcher, type ResolveHost } from '../outbound/guarded-agent';
import type { ToolSet } from '../tools/tool-registry';
import { createMcpConnection, type McpConnection, type SecretEnvironment } from './mcp-connection';
import { refusedMcpServer } from './refused-mcp-server';

/** Why a tab's server at a refused address (one in its URL) is not used. */
const ADDRESS_REFUSAL =
  'its address is not allowed: not a public address (MCP_TAB_HOSTS can name it)';

/** Where a worker's MCP tools come from: the deployment's servers and each tab's. */
export interface McpOptions {
  /** The deployment's servers (MCP_SERVERS), offered to every tab. */
  servers?: readonly McpServer[];
  /**
   * Where secret references and their scopes (`MCP_SECRET_<NAME>_TENANTS`, `_ORIGINS`; see
   * chunk-core's secretRefusal) are read (default: process.env).
   */
  environment?: SecretEnvironment;
  /** Bounds connecting and listing a server before a turn (default 10 s). */
  listTimeoutMs?: number;
  /** A tab's server unused this long is disconnected (default 5 min). */
  idleMs?: number;
  /**
   * Hosts a tab's servers may be on (MCP_TAB_HOSTS): `*` (any host name), `*.example.com`, a
   * host, an address or a CIDR. Default `*`. Whatever the list, a tab's server is connected to
   * only at public addresses, or at addresses of a host or network the list names: a server at
   * any other address is refused, and so is a name that resolves to one.
   */
  tabHosts?: readonly string[];
  /**
   * The tenant that may use a secret without `<secret>_TENANTS`: the one tenant of a deployment
   * without auth (chunk-core's LOCAL_TENANT_NAME). Absent or null, as with auth (API keys): such
   * a secret is refused to every tenant.
   */
  unlistedSecretsTenant?: string | null;
}

/** A tab as its MCP servers are chosen: its config and its tenant's name. */
export interface McpTab {
  config: TabConfig;
  /**
   * The name of the tab's tenant, which its own servers' secrets are checked against and every
   * server's sessions kept apart by; null when unknown: the tab's own servers are left out.
   */
  tenant: string | null;
}

/**
 * The worker's MCP sessions: one per tenant and server, never shared across tenants (a stateful
 * server must not see one tenant's session used for another's tab), plus, per deployment
 * server, one of the worker's own whose listing describes its tools until a tenant's is listed.
 */
export interface McpToolbox {
  /**
   * The tool sets of the servers a tab uses: the deployment's, then the tab's (same name
   * replaces), each its server's last listing, synchronously, for `/context`. A server naming a
   * secret out of the tenant's scope is never connected to: its calls answer with the reason.
   */
  toolSets(tab: McpTab): ToolSet[];
  /**
   * Connects to and lists the tab's servers not yet listed, in its tenant's sessions, before a
   * turn; never throws. A turn prepares before it offers or calls a tool.
   */
  prepare(tab: McpTab, signal: AbortSignal): Promise<void>;
  /** Whether a tab with this config uses its tenant's name: it or the deployment has servers. */
  usesTenant(config: TabConfig): boolean;
  /** Connects to the deployment's servers, so their tools are known before the first turn. */
  start(): void;
  close(): Promise<void>;
}

export function createMcpToolbox(
  options: McpOptions & {
    logger: Logger;
    now?: () => number;
    /** How a tab's servers' host names are resolved (default: the system's resolver). */
    resolveHost?: ResolveHost;
  },
): McpToolbox {
  const deployment = options.servers ?? [];
  const environment = options.environment ?? process.env;
  const now = options.now ?? Date.now;
  const idleMs = options.idleMs ?? 5 * 60_000;
  const logger = options.logger;
  const unlistedSecretsTenant = options.unlistedSecretsTenant ?? null;
  // Keyed by the tenant and the whole definition: two tabs of a tenant naming the same server
  // alike share its session, two tenants' tabs never do. The deployment's own sessions are
  // keyed by the definition alone.
  const connections = new Map<string, McpConnection>();
  const deploymentKeys = new Set(deployment.map((server) => JSON.stringify(server)));
  const tenantKey = (tenant: string, server: McpServer) => JSON.stringify([tenant, server]);
  let sweeper: ReturnType<typeof setInterval> | undefined;

  const tabHosts = parseOutboundAllowlist(options.tabHosts ?? ['*']);
  /** A tab's servers are reached through it: only allowed addresses are connected to. */
  const guardedAgent = guardedDispatcher({
    allowlist: tabHosts,
    ...(options.resolveHost ? { resolve: options.resolveHost } : {}),
    onRefused: ({ host, address }) => logger.warn({ host, address }, 'MCP server address refused'),
  });
  /** The refused hosts and secrets already logged (each is said once, not at every turn). */
  const warnedOnce = new Set<string>();

  /**
   * A server a tab uses: its connection's key (and, for a deployment server, the key of the
   * worker's own session, which describes it until the tenant's is open; for a tab's own, that
   * it is reached through the guarded agent), or why it is refused.
   */
  type Use =
    | { server: McpServer; key: string; describedBy?: string; guarded?: true }
    | { server: McpServer; refusal: ToolSet };

  function serversOf({ config, tenant }: McpTab): Use[] {
    const shared: Use[] = deployment.map((server) =>
      tenant === null
        ? { server, key: JSON.stringify(server) }
        : { server, key: tenantKey(tenant, server), describedBy: JSON.stringify(server) },
    );
    if (tenant === null) return shared;
    const own = (config.mcpServers ?? []).filter((server) => {
      const { hostname, host } = new URL(server.url);
      if (tabHosts.anyHost || namesHost(tabHosts, hostname)) return true;
      if (!warnedOnce.has(host)) {
        warnedOnce.add(host);
        logger.warn({ mcpServer: server.name, host }, 'MCP server host not in MCP_TAB_HOSTS');
      }
      return false;
    });
    if (own.length === 0) return shared;
    const names = new Set(own.map((server) => server.name));
    return [
      ...shared.filter(({ server }) => !names.has(server.name)),
      ...own.map((server) => ownUse(server, tenant)),
    ];
  }

  function ownUse(server: McpHttpServer, tenant: string): Use {
    if (isRefusedHost(new URL(server.url).hostname, tabHosts)) {
      return refused(server, tenant, ADDRESS_REFUSAL, 'MCP server address refused');
    }
    const refusals = serverSecretRefusals(server, {
      tenantName: tenant,
      environment,
      unlistedSecretsTenant,
    });
    if (refusals.length === 0) {
      // Apart from a deployment server of the same definition, which is not guarded.
      return { server, key: JSON.stringify([tenant, server, 'tab']), guarded: true };
    }
    return refused(server, tenant, refusals.join('; '), 'MCP server secret refused');
  }

  /** A tab's server that is never connected to: every call to its tools answers why. */
  function refused(server: McpHttpServer, tenant: string, reason: string, logLine: string): Use {
    const why = `MCP server ${server.name} is not used for this tab: ${reason}`;
    const said = JSON.stringify([tenant, server.name, why]);
    if (!warnedOnce.has(said)) {
      warnedOnce.add(said);
      logger.warn({ mcpServer: server.name, tenant, reason }, logLine);
    }
    return { server, refusal: refusedMcpServer(server.name, why) };
  }

  function connection(server: McpServer, key: string, guarded = false): McpConnection {
    let found = connections.get(key);
    if (!found) {
      found = createMcpConnection({
        server,
        environment,
        logger,
        listTimeoutMs: options.listTimeoutMs ?? 10_000,
        now,
        ...(guarded ? { dispatcher: guardedAgent.agent } : {}),
      });
      connections.set(key, found);
    }
    return found;
  }

  function toolSetOf(use: Use): ToolSet {
    if ('refusal' in use) return use.refusal;
    if (use.describedBy === undefined) return connection(use.server, use.key, use.guarded).tools;
    return (connections.get(use.key) ?? connection(use.server, use.describedBy)).tools;
  }

  function closeIdle() {
    for (const [key, open] of connections) {
      if (deploymentKeys.has(key) || now() - open.lastUsedAt() < idleMs) continue;
      connections.delete(key);
      void open.close();
    }
  }

  return {
    toolSets: (tab) => serversOf(tab).map(toolSetOf),
    usesTenant: (config) => deployment.length > 0 || (config.mcpServers?.length ?? 0) > 0,
    async prepare(tab, signal) {
      await Promise.all(
        serversOf(tab).map((use) =>
          'refusal' in use ? undefined : connection(use.server, use.key, use.guarded).ready(signal),
        ),
      );
    },
    start() {
      const signal = new AbortController().signal;
      for (const server of deployment)
        void connection(server, JSON.stringify(server)).ready(signal);
      sweeper = setInterval(closeIdle, Math.min(idleMs, 60_000));
      sweeper.unref?.();
    },
    async close() {
      if (sweeper) clearInterval(sweeper);
      const open = [...connections.values()];
      connections.clear();
      await Promise.allSettled(open.map((connection) => connection.close()));
      await guardedAgent.close();
    },
  };
}
