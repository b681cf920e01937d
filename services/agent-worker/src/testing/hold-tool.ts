import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../tools/tool-registry';

/** A tool that runs until the test lets it go: a turn held mid-tool on demand. */
export function holdTool(name = 'hold'): {
  tool: ToolDefinition<unknown>;
  /** Resolves once the model called the tool. */
  running: Promise<void>;
  release(): void;
} {
  let reached = () => {};
  let release = () => {};
  const running = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const tool = defineTool({
    name,
    description: 'Waits until the test releases it.',
    inputSchema: z.object({}),
    async run() {
      reached();
      await released;
      return 'released';
    },
  });
  return { tool: tool as ToolDefinition<unknown>, running, release };
}
