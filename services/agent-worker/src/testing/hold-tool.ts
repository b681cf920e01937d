import { z } from 'zod';
import { defineTool, type ToolDefinition } from '../tools/tool-registry';
import { deferred } from './deferred';

/** A tool that runs until the test lets it go: a turn held mid-tool on demand. */
export function holdTool(name = 'hold'): {
  tool: ToolDefinition<unknown>;
  /** Resolves once the model called the tool. */
  running: Promise<void>;
  release(): void;
} {
  const reached = deferred();
  const released = deferred();
  const tool = defineTool({
    name,
    description: 'Waits until the test releases it.',
    inputSchema: z.object({}),
    async run() {
      reached.resolve();
      await released.promise;
      return 'released';
    },
  });
  return {
    tool: tool as ToolDefinition<unknown>,
    running: reached.promise,
    release: released.resolve,
  };
}
