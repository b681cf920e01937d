import type { Bus, Subscription } from '@chunklog/bus';
import { z } from 'zod';
import {
  createToolRegistry,
  defineTool,
  type ToolDefinition,
  type ToolRegistry,
} from './tool-registry';

/** Where tool services announce (and withdraw) the tools they serve. */
export const TOOL_ANNOUNCE_SUBJECT = 'chunklog.tools.announce';
/** Published by a worker when it starts: every tool service answers by announcing again. */
export const TOOL_DISCOVER_SUBJECT = 'chunklog.tools.discover';

/** Request/reply subject on which a remote tool is called (served by a queue group). */
export function toolCallSubject(name: string): string {
  return `chunklog.tools.call.${name}`;
}

/** An announcement: the tool as the model sees it, and for how long it stands without renewal. */
export const ToolAnnouncementSchema = z.object({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  /** The announcement lapses after this long unless repeated. */
  ttlMs: z.number().int().positive(),
  /** True when the service stops serving it. */
  withdrawn: z.boolean().optional(),
});
export type ToolAnnouncement = z.infer<typeof ToolAnnouncementSchema>;

export const ToolCallRequestSchema = z.object({
  tabId: z.string(),
  turnId: z.string(),
  callId: z.string(),
  input: z.unknown(),
});
export type ToolCallRequest = z.infer<typeof ToolCallRequestSchema>;

export const ToolCallReplySchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), result: z.unknown() }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);
export type ToolCallReply = z.infer<typeof ToolCallReplySchema>;

/**
 * Serves a tool to every worker over the bus: answers calls in a queue group (so several
 * instances share the load) and announces the tool now, on every discovery request, and
 * periodically until stopped.
 */
export async function serveRemoteTool(
  bus: Bus,
  tool: ToolDefinition<unknown>,
  options: { announceEveryMs?: number } = {},
): Promise<{ stop(): Promise<void> }> {
  const announceEveryMs = options.announceEveryMs ?? 10_000;
  const ttlMs = announceEveryMs * 3;
  const registry = createToolRegistry([tool]);
  const [described] = registry.describe();
  const announcement: ToolAnnouncement = {
    name: tool.name,
    description: tool.description,
    inputSchema: (described?.input_schema ?? { type: 'object' }) as Record<string, unknown>,
    ttlMs,
  };
  const calls = await bus.serve(
    toolCallSubject(tool.name),
    async (payload): Promise<ToolCallReply> => {
      const request = ToolCallRequestSchema.safeParse(payload);
      if (!request.success) return { ok: false, error: 'Malformed tool call request' };
      const { tabId, turnId, callId, input } = request.data;
      const outcome = await registry.run(tool.name, input, {
        tabId,
        turnId,
        callId,
        signal: new AbortController().signal,
      });
      return outcome.isError
        ? { ok: false, error: String(outcome.result) }
        : { ok: true, result: outcome.result };
    },
    { queue: `chunklog-tools-${tool.name}` },
  );
  const announce = () => bus.publish(TOOL_ANNOUNCE_SUBJECT, announcement);
  const discovery = await bus.subscribe(TOOL_DISCOVER_SUBJECT, () => void announce());
  const timer = setInterval(() => void announce(), announceEveryMs);
  timer.unref?.();
  await announce();
  return {
    async stop() {
      clearInterval(timer);
      await discovery.stop();
      await calls.stop();
      await bus.publish(TOOL_ANNOUNCE_SUBJECT, { ...announcement, withdrawn: true });
    },
  };
}

/** A registry entry that forwards calls to whichever tool service answers. */
function remoteToolProxy(bus: Bus, announcement: ToolAnnouncement, timeoutMs: number) {
  return defineTool({
    name: announcement.name,
    description: announcement.description,
    inputSchema: z.record(z.string(), z.unknown()),
    jsonSchema: announcement.inputSchema,
    async run(input, context) {
      const request: ToolCallRequest = {
        tabId: context.tabId,
        turnId: context.turnId,
        callId: context.callId,
        input,
      };
      const reply = ToolCallReplySchema.parse(
        await bus.request(toolCallSubject(announcement.name), request, { timeoutMs }),
      );
      if (!reply.ok) throw new Error(reply.error);
      return reply.result;
    },
  });
}

/**
 * Keeps a registry in step with the tools announced on the bus: adds a proxy for each
 * announced tool, and removes it when withdrawn or when its announcement lapses.
 * Built-in tools win over remote tools of the same name.
 */
export function createRemoteToolDirectory(input: {
  bus: Bus;
  registry: ToolRegistry;
  now?: () => number;
  callTimeoutMs?: number;
  onChange?: (names: string[]) => void;
}): { start(): Promise<void>; stop(): Promise<void>; names(): string[] } {
  const { bus, registry } = input;
  const now = input.now ?? Date.now;
  const callTimeoutMs = input.callTimeoutMs ?? 30_000;
  const reserved = new Set(registry.names());
  const expiries = new Map<string, number>();
  const announced = new Map<string, string>();
  let subscription: Subscription | undefined;
  let sweeper: ReturnType<typeof setInterval> | undefined;

  const changed = () => input.onChange?.([...expiries.keys()]);
  const forget = (name: string) => {
    expiries.delete(name);
    announced.delete(name);
    registry.remove(name);
    changed();
  };

  return {
    async start() {
      subscription = await bus.subscribe(TOOL_ANNOUNCE_SUBJECT, (payload) => {
        const parsed = ToolAnnouncementSchema.safeParse(payload);
        if (!parsed.success || reserved.has(parsed.data.name)) return;
        const announcement = parsed.data;
        if (announcement.withdrawn) {
          if (expiries.has(announcement.name)) forget(announcement.name);
          return;
        }
        expiries.set(announcement.name, now() + announcement.ttlMs);
        // Re-registering only on a real change keeps the tool JSON (and the prompt cache) stable.
        const fingerprint = JSON.stringify([announcement.description, announcement.inputSchema]);
        if (announced.get(announcement.name) === fingerprint) return;
        announced.set(announcement.name, fingerprint);
        registry.add(remoteToolProxy(bus, announcement, callTimeoutMs) as ToolDefinition<unknown>);
        changed();
      });
      sweeper = setInterval(() => {
        for (const [name, expiresAt] of expiries) if (expiresAt < now()) forget(name);
      }, 1000);
      sweeper.unref?.();
      await bus.publish(TOOL_DISCOVER_SUBJECT, {});
    },
    async stop() {
      if (sweeper) clearInterval(sweeper);
      await subscription?.stop();
    },
    names: () => [...expiries.keys()],
  };
}
