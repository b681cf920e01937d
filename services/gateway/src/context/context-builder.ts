import type { Chunk, Tab } from '@chunklog/chunk-core';
import type { FastifyBaseLogger } from 'fastify';

/** Whose settings and tools a `/context` request was built with. */
export type ContextSource = 'worker' | 'gateway-defaults';

/** The request `GET /context` shows, and whose options built it. */
export interface BuiltContext {
  request: unknown;
  source: ContextSource;
}

/**
 * Builds the Anthropic request the tab's next step would send, for `GET /context`. The worker
 * owns the model defaults and the tool registry, so the default builder asks the workers on the
 * bus, and a process that composes a worker may use it directly.
 */
export type ContextBuilder = (input: {
  tab: Tab;
  /** The tab's log from its latest compaction on (the whole log when it has none). */
  chunks: Chunk[];
  /** The request's logger, for saying why the workers' options could not be had. */
  logger: FastifyBaseLogger;
}) => BuiltContext | Promise<BuiltContext>;
