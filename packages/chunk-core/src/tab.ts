import { z } from 'zod';
import { UsageSchema } from './events';

export const TabStatusSchema = z.enum(['idle', 'running']);
export type TabStatus = z.infer<typeof TabStatusSchema>;

/** Per-tab agent settings; every field optional, the worker supplies defaults. */
export const TabConfigSchema = z
  .object({
    model: z.string().min(1).max(200).optional(),
    system: z.string().max(200_000).optional(),
    maxTokens: z.number().int().min(1).max(128_000).optional(),
    maxSteps: z.number().int().min(1).max(200).optional(),
    thinking: z.object({ budgetTokens: z.number().int().min(1024) }).optional(),
    /** Names of tools offered to the model; absent means every registered tool. */
    tools: z
      .array(z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/))
      .max(128)
      .optional(),
  })
  .strict();
export type TabConfig = z.infer<typeof TabConfigSchema>;

/** A tab as the API returns it (contract: DESIGN section 6). */
export const TabSchema = z.object({
  id: z.uuid(),
  parentTabId: z.uuid().nullable(),
  title: z.string(),
  config: TabConfigSchema,
  status: TabStatusSchema,
  activeTurnId: z.uuid().nullable(),
  lastSeq: z.number().int().nonnegative(),
  usage: UsageSchema,
  createdAt: z.number().int().nonnegative(),
  updatedAt: z.number().int().nonnegative(),
});
export type Tab = z.infer<typeof TabSchema>;
