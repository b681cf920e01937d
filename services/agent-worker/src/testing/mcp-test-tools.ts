import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** What the test tools tell their test about the calls they serve. */
export interface McpTestToolHooks {
  /** A `slow` call began (the test may cancel the turn now). */
  onSlowStarted(): void;
  /** A `slow` call's request was cancelled by the client. */
  onCancelled(): void;
  /** The `die` tool was called: the server must go away without answering. */
  die(): void;
}

/**
 * The tools every MCP test server serves: `echo`, `fail` (an error result), `slow` (waits until
 * told or cancelled), `die` (the server dies mid-call), `search.v2` (a name the API would
 * refuse as it is) and `count` (its calls in this session: state a session keeps).
 */
export function registerMcpTestTools(server: McpServer, hooks: McpTestToolHooks): void {
  let counted = 0;
  server.registerTool('count', { description: 'Counts its calls in this session' }, async () => ({
    content: [{ type: 'text', text: `count ${++counted}` }],
  }));
  server.registerTool(
    'echo',
    { description: 'Echoes the text back', inputSchema: { text: z.string().min(1) } },
    async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
  );
  server.registerTool('fail', { description: 'Always fails' }, async () => ({
    content: [{ type: 'text', text: 'the tool failed on purpose' }],
    isError: true,
  }));
  server.registerTool(
    'slow',
    { description: 'Waits, then answers', inputSchema: { milliseconds: z.number().int() } },
    ({ milliseconds }, extra) =>
      new Promise((resolve) => {
        hooks.onSlowStarted();
        const timer = setTimeout(
          () => resolve({ content: [{ type: 'text', text: 'slept' }] }),
          milliseconds,
        );
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          hooks.onCancelled();
        });
      }),
  );
  server.registerTool('die', { description: 'Kills the server mid-call' }, async (extra) => {
    // A progress notification first, so the call's response stream is open when the server dies.
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: 1 },
      });
    }
    setTimeout(hooks.die, 200);
    return new Promise(() => {});
  });
  server.registerTool(
    'search.v2',
    { description: 'A tool whose name needs cleaning', inputSchema: { query: z.string() } },
    async ({ query }) => ({ content: [{ type: 'text', text: `found ${query}` }] }),
  );
}
