import type { McpServer } from '@chunklog/chunk-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import {
  createToolRegistry,
  defineTool,
  type ToolDefinition,
  type ToolSet,
} from '../tools/tool-registry';
import { untilSettledOrAborted } from '../turn/abortable';
import { loadMcpSdk, type McpSdk } from './load-mcp-sdk';
import { type McpCallResult, mcpCallResultValue } from './mcp-call-result';
import { mcpToolNames } from './mcp-tool-names';
import { resolveSecrets } from './resolve-secrets';

/** The environment secret references are read from (the worker's own, in production). */
export type SecretEnvironment = Readonly<Record<string, string | undefined>>;

/** One MCP server as the worker uses it: a lazy session, its tools, and calls to them. */
export interface McpConnection {
  readonly server: McpServer;
  /**
   * The server's tools under their public names, as last listed: kept through a lost session, so
   * the tools offered (and the prompt cache) stay put while a server restarts; a call made
   * meanwhile is an error result, and the next one opens a new session.
   */
  readonly tools: ToolSet;
  /** Opens the session and lists the tools unless done; a failure is logged, never thrown. */
  ready(signal: AbortSignal): Promise<void>;
  /** When the connection was last used (for closing idle ones). */
  lastUsedAt(): number;
  close(): Promise<void>;
}

export interface McpConnectionOptions {
  server: McpServer;
  environment: SecretEnvironment;
  logger: Logger;
  /** Bounds connecting and each `tools/list` page. */
  listTimeoutMs: number;
  now: () => number;
  /**
   * What an HTTP server's requests go through: for a tab's servers, the guarded agent that
   * connects to allowed addresses only; absent (the deployment's servers), fetch's own.
   */
  dispatcher?: () => Promise<Dispatcher>;
}

const DEFAULT_CALL_TIMEOUT_MS = 60_000;
const RETRY_AFTER_FAILURE_MS = 30_000;
/** Guards against a server that pages forever. */
const MAX_LISTED_TOOLS = 1_000;
const CLIENT_INFO = { name: 'chunklog-agent-worker', version: '0.1.0' };

/** The MCP tool names its JSON schema in `inputSchema`; its arguments are an object. */
const ArgumentsSchema = z.record(z.string(), z.unknown());

interface Session {
  client: Promise<Client>;
  /** The first listing of this session (refreshes replace the tools without replacing it). */
  listed: Promise<void>;
  calls: number;
}

export function createMcpConnection(options: McpConnectionOptions): McpConnection {
  const { server, environment, now } = options;
  const logger = options.logger.child({ mcpServer: server.name, transport: server.transport });
  const registry = createToolRegistry();
  let session: Session | undefined;
  let lastUsedAt = now();
  let closed = false;
  let listingsAsked = 0;
  let listingApplied = 0;
  /** When the last session failed to open or list; a turn waits for it again only later. */
  let failedAt: number | undefined;

  /** Lists the tools, then applies them unless a listing asked for later was applied first. */
  async function refresh(client: Client): Promise<void> {
    const generation = ++listingsAsked;
    const tools = await list(client);
    if (generation < listingApplied) return;
    listingApplied = generation;
    apply(tools);
  }

  /** Replaces the registry's tools with a listing, in the order of their public names. */
  function apply(tools: readonly Tool[]) {
    const byOriginal = new Map(tools.map((tool) => [tool.name, tool]));
    const { named, dropped } = mcpToolNames(server.name, [...byOriginal.keys()]);
    if (dropped.length > 0) logger.warn({ dropped }, 'MCP tools left out: their names collide');
    for (const name of registry.names()) registry.remove(name);
    for (const [name, original] of named) {
      registry.add(toolDefinition(name, byOriginal.get(original)!) as ToolDefinition<unknown>);
    }
    logger.info({ tools: named.map(([name]) => name) }, 'MCP tools listed');
  }

  function toolDefinition(name: string, tool: Tool) {
    return defineTool({
      name,
      description: tool.description ?? tool.title ?? `The ${tool.name} tool of ${server.name}`,
      inputSchema: ArgumentsSchema,
      jsonSchema: tool.inputSchema as Record<string, unknown>,
      run: (input, context) => call(tool.name, input, context.signal),
    });
  }

  async function list(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor }, {
        timeout: options.listTimeoutMs,
      });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && tools.length < MAX_LISTED_TOOLS);
    return tools;
  }

  function transport(sdk: McpSdk): Transport {
    if (server.transport === 'http') {
      return new sdk.StreamableHTTPClientTransport(new URL(server.url), {
        // Secrets are read at each request, never kept in the transport's options.
        fetch: async (url, init) => {
          const headers = new Headers(init?.headers);
          for (const [key, value] of Object.entries(resolveSecrets(server.headers, environment))) {
            headers.set(key, value);
          }
          const through = options.dispatcher ? { dispatcher: await options.dispatcher() } : {};
          return fetch(url, { ...init, headers, ...through } as RequestInit);
        },
        // A lost stream fails the calls on it (the client.onerror in open), never resumed.
        reconnectionOptions: {
          maxRetries: 0,
          initialReconnectionDelay: 1_000,
          maxReconnectionDelay: 1_000,
          reconnectionDelayGrowFactor: 1,
        },
      });
    }
    const child = new sdk.StdioClientTransport({
      command: server.command,
      args: server.args ?? [],
      ...(server.cwd ? { cwd: server.cwd } : {}),
      env: { ...sdk.getDefaultEnvironment(), ...resolveSecrets(server.env, environment) },
      stderr: 'pipe',
    });
    // Read, or a chatty server would block on a full pipe.
    child.stderr?.on('data', (data: Buffer) =>
      logger.debug({ stderr: data.toString().slice(0, 2_000) }, 'MCP server stderr'),
    );
    return child;
  }

  function open(): Session {
    // Filled in at once: connect needs the session, to drop it when its client closes.
    const current = { calls: 0 } as Session;
    current.client = connect(current);
    current.listed = current.client.then(refresh);
    current.listed.then(
      () => {
        failedAt = undefined;
      },
      (error: unknown) => {
        failedAt = now();
        logger.warn({ err: error }, 'MCP server unavailable');
        drop(current);
        void current.client.then((client) => client.close()).catch(() => {});
      },
    );
    return current;
  }

  async function connect(current: Session): Promise<Client> {
    const sdk = await loadMcpSdk();
    const client = new sdk.Client(CLIENT_INFO, { capabilities: {} });
    client.onclose = () => drop(current);
    // A transport error while calls are in flight (a stream cut by a dying server) fails them
    // now: the SDK would otherwise leave them waiting for their timeout.
    client.onerror = (error) => {
      logger.warn({ err: error }, 'MCP transport error');
      if (current.calls > 0) void client.close();
    };
    client.setNotificationHandler(sdk.ToolListChangedNotificationSchema, () => {
      refresh(client).catch((error: unknown) =>
        logger.warn({ err: error }, 'MCP tools could not be listed again'),
      );
    });
    try {
      await client.connect(transport(sdk), { timeout: options.listTimeoutMs });
    } catch (error) {
      void client.close().catch(() => {});
      throw error;
    }
    return client;
  }

  /** Forgets a session that ended, so the next use opens a new one. */
  function drop(ended: Session) {
    if (session === ended) session = undefined;
  }

  async function call(tool: string, input: unknown, signal: AbortSignal): Promise<unknown> {
    lastUsedAt = now();
    if (closed) throw new Error(`MCP server ${server.name} is closed`);
    session ??= open();
    const current = session;
    current.calls++;
    let result: McpCallResult;
    try {
      const client = await current.client;
      result = (await client.callTool(
        { name: tool, arguments: input as Record<string, unknown> },
        undefined,
        {
          signal,
          timeout: server.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
          // Progress notifications restart the timeout; asking for them needs a callback.
          resetTimeoutOnProgress: true,
          onprogress: () => {},
        },
      )) as McpCallResult;
    } catch (error) {
      if (signal.aborted || !isSessionFailure(error, await loadMcpSdk())) throw error;
      drop(current);
      void current.client.then((client) => client.close()).catch(() => {});
      throw new Error(`MCP server ${server.name} failed: ${errorMessage(error)}`, {
        cause: error,
      });
    } finally {
      current.calls--;
    }
    const value = mcpCallResultValue(result);
    if (result.isError) throw new Error(typeof value === 'string' ? value : JSON.stringify(value));
    return value;
  }

  // Every step describes the turn's tools: a connection a running turn offers is never idle.
  const tools: ToolSet = {
    names: () => registry.names(),
    has: (name) => registry.has(name),
    describe(only) {
      lastUsedAt = now();
      return registry.describe(only);
    },
    run: (name, input, context) => registry.run(name, input, context),
  };

  return {
    server,
    tools,
    async ready(signal) {
      lastUsedAt = now();
      if (closed) return;
      // A server that just failed is not waited for again before every turn; a call still
      // tries it (and so does the first turn after RETRY_AFTER_FAILURE_MS).
      if (!session && failedAt !== undefined && now() - failedAt < RETRY_AFTER_FAILURE_MS) return;
      session ??= open();
      await untilSettledOrAborted(session.listed, signal).catch(() => {});
    },
    // A call in flight (up to callTimeoutMs, or longer with progress) is a use.
    lastUsedAt: () => (session !== undefined && session.calls > 0 ? now() : lastUsedAt),
    async close() {
      closed = true;
      const current = session;
      session = undefined;
      if (current) await current.client.then((client) => client.close()).catch(() => {});
    },
  };
}

/** A failure of the session rather than of the call: the transport, or the connection closing. */
function isSessionFailure(error: unknown, sdk: McpSdk): boolean {
  return !(error instanceof sdk.McpError) || error.code === sdk.ErrorCode.ConnectionClosed;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
