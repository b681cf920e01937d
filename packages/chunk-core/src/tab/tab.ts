import { z } from 'zod';
import { UsageSchema, WaitingCallSchema } from '../schemas/events';
import { ApprovalPolicySchema } from './approval-policy';
import { TabMcpServersSchema } from './mcp-servers';

/** `waiting`: no turn runs, one is paused until a person decides on its waiting tool calls. */
export const TabStatusSchema = z.enum(['idle', 'running', 'waiting']);
export type TabStatus = z.infer<typeof TabStatusSchema>;

/** The largest `max_tokens` a tab may ask for, and so the bound of its thinking budget. */
export const MAX_OUTPUT_TOKENS = 128_000;

/** The fields of a tab's settings, as stored. */
const TabConfigFieldsSchema = z
  .object({
    model: z.string().min(1).max(200).optional(),
    system: z.string().max(200_000).optional(),
    maxTokens: z.number().int().min(1).max(MAX_OUTPUT_TOKENS).optional(),
    maxSteps: z.number().int().min(1).max(200).optional(),
    /** The API wants 1024 <= budget_tokens < max_tokens; see tabRequestOptions for max_tokens. */
    thinking: z
      .object({
        budgetTokens: z
          .number()
          .int()
          .min(1024)
          .max(MAX_OUTPUT_TOKENS - 1),
      })
      .optional(),
    /** Names of tools offered to the model; absent means every registered tool. */
    tools: z
      .array(z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/))
      .max(128)
      .optional(),
    /**
     * MCP servers whose tools the tab's model is offered besides the worker's (Streamable HTTP
     * only; header values are references to the worker's environment, never secrets).
     */
    mcpServers: TabMcpServersSchema.optional(),
    /** Which tool calls wait for a person's decision before they run (absent: the deployment's). */
    approval: ApprovalPolicySchema.optional(),
    /**
     * When the worker compacts the tab (the API's native compaction): before a step whose
     * request would pass `threshold` of the model's context window, with `instructions` in
     * place of the API's summarization prompt. `enabled: false` turns the threshold off; a
     * prompt the API calls too long is still compacted, or the tab could not answer again.
     */
    compaction: z
      .object({
        threshold: z.number().min(0.1).max(0.95).optional(),
        instructions: z.string().min(1).max(20_000).optional(),
        enabled: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/**
 * Per-tab agent settings; every field optional, the worker supplies defaults. A tab that sets
 * both `maxTokens` and a thinking budget must leave room above the budget, as the API requires
 * (`budget_tokens < max_tokens`); one without `maxTokens` gets a max_tokens above its budget
 * from tabRequestOptions.
 */
export const TabConfigSchema = TabConfigFieldsSchema.refine(
  (config) =>
    config.maxTokens === undefined ||
    config.thinking === undefined ||
    config.thinking.budgetTokens < config.maxTokens,
  {
    path: ['thinking', 'budgetTokens'],
    message: 'thinking.budgetTokens must be below maxTokens (the API requires it)',
  },
);
export type TabConfig = z.infer<typeof TabConfigSchema>;

/**
 * A tab's settings as read back: unrefined, and with no upper bound on the thinking budget.
 * Tabs stored before those rules may hold a budget at or above maxTokens (tabRequestOptions
 * still makes their requests valid) or above MAX_OUTPUT_TOKENS (creation once took any budget
 * from 1024), and must stay readable: a response failing its schema would be a 500 for the tab
 * and for every list page holding it.
 */
const StoredTabConfigSchema = TabConfigFieldsSchema.extend({
  thinking: z.object({ budgetTokens: z.number().int().min(1024) }).optional(),
});

/** A tab as the API returns it (docs/architecture.md, "HTTP API"). */
export const TabSchema = z.object({
  id: z.uuid(),
  parentTabId: z.uuid().nullable(),
  /** A fork: the tab it was forked from (null for a tab that is no fork, or once it is deleted). */
  forkOf: z.uuid().nullable(),
  /** A fork: the seq it was forked after; its history up to there is the parent's. */
  forkSeq: z.number().int().nonnegative().nullable(),
  title: z.string(),
  config: StoredTabConfigSchema,
  status: TabStatusSchema,
  activeTurnId: z.uuid().nullable(),
  /** The paused turn and its calls waiting for a decision, while `status` is `waiting`. */
  waiting: z
    .object({
      turnId: z.uuid(),
      calls: z.array(WaitingCallSchema),
      /** Epoch ms after which undecided calls are denied with reason `expired`. */
      expiresAt: z.number().int().nonnegative().nullable(),
    })
    .nullable(),
  lastSeq: z.number().int().nonnegative(),
  usage: UsageSchema,
  createdAt: z.number().int().nonnegative(),
  updatedAt: z.number().int().nonnegative(),
});
export type Tab = z.infer<typeof TabSchema>;
