import type { McpServer, TabConfig } from '@chunklog/chunk-core';
import type { Logger } from 'pino';
import type { ToolSet } from '../tools/tool-registry';
import { isAllowedHost } from './allowed-host';
import { createMcpConnection, type McpConnection, type SecretEnvironment } from './mcp-connection';

/** Where a worker's MCP tools come from: the deployment's servers and each tab's. */
export interface McpOptions {
  /** The deployment's servers (MCP_SERVERS), offered to every tab. */
  servers?: readonly McpServer[];
  /** Where secret references are read (default: process.env). */
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

/** The worker's MCP connections, shared by the tabs that name the same server. */
export interface McpToolbox {
  /**
   * The tool sets of the servers a tab uses, in a fixed order: the deployment's, then the tab's
   * (a tab's server of the same name as a deployment server replaces it for that tab). Each is
   * the server's last listing (empty before the first): synchronous, for `/context`.
   */
  toolSets(config: TabConfig): ToolSet[];
  /** Connects to and lists the tab's servers not yet listed, before a turn; never throws. */
  prepare(config: TabConfig, signal: AbortSignal): Promise<void>;
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
  // Keyed by the whole definition: two tabs naming the same server alike share its session.
  const connections = new Map<string, McpConnection>();
  const deploymentKeys = new Set(deployment.map((server) => JSON.stringify(server)));
  let sweeper: ReturnType<typeof setInterval> | undefined;

  const tabHosts = options.tabHosts ?? ['*'];
  const refused = new Set<string>();

  function serversOf(config: TabConfig): readonly McpServer[] {
    const own = (config.mcpServers ?? []).filter((server) => {
      if (isAllowedHost(server.url, tabHosts)) return true;
      const host = new URL(server.url).host;
      // Said once per host, not at every turn and /context.
      if (!refused.has(host)) {
        refused.add(host);
        logger.warn({ mcpServer: server.name, host }, 'MCP server host not in MCP_TAB_HOSTS');
      }
      return false;
    });
    if (own.length === 0) return deployment;
    const names = new Set(own.map((server) => server.name));
    return [...deployment.filter((server) => !names.has(server.name)), ...own];
  }

  function connection(server: McpServer): McpConnection {
    const key = JSON.stringify(server);
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

  function closeIdle() {
    for (const [key, open] of connections) {
      if (deploymentKeys.has(key) || now() - open.lastUsedAt() < idleMs) continue;
      connections.delete(key);
      void open.close();
    }
  }

  return {
    toolSets: (config) => serversOf(config).map((server) => connection(server).tools),
    async prepare(config, signal) {
      await Promise.all(serversOf(config).map((server) => connection(server).ready(signal)));
    },
    start() {
      const signal = new AbortController().signal;
      for (const server of deployment) void connection(server).ready(signal);
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
