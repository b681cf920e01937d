import { z } from 'zod';
import { defineTool } from '../tools/tool-registry';

/** Runs one subagent turn in a child tab of `parentTabId` and returns its final answer. */
export type SubagentRunner = (input: {
  parentTabId: string;
  prompt: string;
  title?: string;
  signal: AbortSignal;
}) => Promise<{ tabId: string; answer: string; reason: string }>;

/**
 * The `task` tool: delegates a self-contained job to a subagent. The subagent runs in a child
 * tab through the same log path (its chunks are persisted and streamed like any tab's), so
 * its work can be inspected and resumed; only its final answer returns to the caller.
 */
export function createTaskTool(runSubagent: SubagentRunner) {
  return defineTool({
    name: 'task',
    description:
      'Delegates a self-contained task to a subagent that has the same tools (except task) and returns its final answer. Give it everything it needs in the prompt.',
    inputSchema: z.object({
      prompt: z.string().min(1).max(100_000).describe('The complete instructions for the subagent'),
      title: z.string().min(1).max(200).optional().describe('A short title for the child tab'),
    }),
    async run({ prompt, title }, context) {
      const result = await runSubagent({
        parentTabId: context.tabId,
        prompt,
        ...(title ? { title } : {}),
        signal: context.signal,
      });
      if (result.reason !== 'completed' && result.reason !== 'max_steps') {
        throw new Error(`The subagent's turn ended with ${result.reason} (tab ${result.tabId})`);
      }
      return { childTabId: result.tabId, answer: result.answer };
    },
  });
}
