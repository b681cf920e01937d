import {
  type McpHttpServer,
  type McpServer,
  serverSecretRefusals,
  type TabConfig,
} from '@chunklog/chunk-core';
import type { Logger } from 'pino';
import type { ToolSet } from '../tools/tool-registry';
import { isAllowedHost } from './allowed-host';
import { createMcpConnection, type McpConnection, type SecretEnvironment } from './mcp-connection';
import { refusedMcpServer } from './refused-mcp-server';

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
   * Hosts a tab's servers may be on (MCP_TAB_HOSTS; see isAllowedHost). Default `*`: any, which
   * lets a tab have the worker send requests to any address it can reach.
   */
  tabHosts?: readonly string[];
}

/** A tab as its MCP servers are chosen: its config and its tenant's name. */
export interface McpTab {
  config: TabConfig;
  /**
   * The name of the tab's tenant, which its own servers' secrets are checked against and their
   * sessions kept apart by; null when unknown: the tab's own servers are left out.
   */
  tenant: string | null;
}

/**
 * The worker's MCP connections: the deployment's, shared by every tab; a tab's own, shared by
 * the tabs of one tenant that name the same server alike, never across tenants.
 */
export interface McpToolbox {
  /**
   * The tool sets of the servers a tab uses, in a fixed order: the deployment's, then the tab's
   * (a tab's server of the same name as a deployment server replaces it for that tab). Each is
   * the server's last listing (empty before the first): synchronous, for `/context`. A tab's
   * server naming a secret its tenant may not use is never connected to: its tool set offers
   * nothing and answers every call with the reason.
   */
  toolSets(tab: McpTab): ToolSet[];
  /** Connects to and lists the tab's servers not yet listed, before a turn; never throws. */
  prepare(tab: McpTab, signal: AbortSignal): Promise<void>;
  /** Connects to the deployment's servers, so their tools are known before the first turn. */
  start(): void;
  close(): Promise<void>;
}

export function createMcpToolbox(
  options: McpOptions & { logger: Logger; now?: () => number },
): McpToolbox {
  const deployment = options.servers ?? [];
  const environment = options.environment ?? process.env;
  const now = options.now ?? Date.now;
  const idleMs = options.idleMs ?? 5 * 60_000;
  const logger = options.logger;
  // Keyed by the whole definition, and a tab's server by its tenant too: two tabs of a tenant
  // naming the same server alike share its session, two tenants' tabs never do.
  const connections = new Map<string, McpConnection>();
  const deploymentKeys = new Set(deployment.map((server) => JSON.stringify(server)));
  let sweeper: ReturnType<typeof setInterval> | undefined;

  const tabHosts = options.tabHosts ?? ['*'];
  /** The refused hosts and secrets already logged (each is said once, not at every turn). */
  const warnedOnce = new Set<string>();

  /** A server a tab uses: its connection's key, or why it is warnedOnce. */
  type Use = { server: McpServer; key: string } | { server: McpServer; refusal: ToolSet };

  function serversOf({ config, tenant }: McpTab): Use[] {
    const shared = deployment.map((server) => ({ server, key: JSON.stringify(server) }));
    if (tenant === null) return shared;
    const own = (config.mcpServers ?? []).filter((server) => {
      if (isAllowedHost(server.url, tabHosts)) return true;
      const host = new URL(server.url).host;
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
    const refusals = serverSecretRefusals(server, tenant, environment);
    if (refusals.length === 0) return { server, key: JSON.stringify([tenant, server]) };
    const why = `MCP server ${server.name} is not used for this tab: ${refusals.join('; ')}`;
    const said = JSON.stringify([tenant, server.name, why]);
    if (!warnedOnce.has(said)) {
      warnedOnce.add(said);
      logger.warn({ mcpServer: server.name, tenant, refusals }, 'MCP server secret refused');
    }
    return { server, refusal: refusedMcpServer(server.name, why) };
  }

  function connection(server: McpServer, key: string): McpConnection {
    let found = connections.get(key);
    if (!found) {
      found = createMcpConnection({
        server,
        environment,
        logger,
        listTimeoutMs: options.listTimeoutMs ?? 10_000,
        now,
      });
      connections.set(key, found);
    }
    return found;
  }

  const toolSetOf = (use: Use): ToolSet =>
    'refusal' in use ? use.refusal : connection(use.server, use.key).tools;

  function closeIdle() {
    for (const [key, open] of connections) {
      if (deploymentKeys.has(key) || now() - open.lastUsedAt() < idleMs) continue;
      connections.delete(key);
      void open.close();
    }
  }

  return {
    toolSets: (tab) => serversOf(tab).map(toolSetOf),
    async prepare(tab, signal) {
      await Promise.all(
        serversOf(tab).map((use) =>
          'refusal' in use ? undefined : connection(use.server, use.key).ready(signal),
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
    },
  };
}
