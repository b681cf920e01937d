import { randomUUID } from 'node:crypto';
import type { Bus } from '@chunklog/bus';
import { INTAKE_QUEUE, MessageCommandSchema } from '@chunklog/chunk-core';

/**
 * Puts a wake-up for the tab's paused turn on the intake queue (`mode: approval`): the worker
 * that claims the tab resumes the turn when every waiting call is decided, or ends it when a
 * cancel stamped above the turn's came first.
 */
export async function wakePausedTurn(
  bus: Bus,
  input: { tabId: string; cancelGeneration: number; acceptedAt: number },
): Promise<void> {
  const chunkId = randomUUID();
  await bus.enqueue(
    INTAKE_QUEUE,
    MessageCommandSchema.parse({ ...input, chunkId, text: '', mode: 'approval' }),
    { msgId: chunkId },
  );
}
