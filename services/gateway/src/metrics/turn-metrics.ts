import type { Bus, Subscription } from '@chunklog/bus';
import { TurnDoneEventSchema } from '@chunklog/chunk-core';
import type { GatewayMetrics } from './gateway-metrics';

/** Every tab's turn-done events (the worker publishes them; no tab id is known in advance). */
const ALL_TURN_DONE = 'chunklog.tab.*.evt.turn-done';

/**
 * Counts turns and model tokens (cache reads and writes included) from the turn-done events on
 * the bus. Each gateway sees every turn, so these counters are deployment-wide: aggregate them
 * across gateways with max(), not sum().
 */
export function observeTurns(bus: Bus, metrics: GatewayMetrics): Promise<Subscription> {
  return bus.subscribe(ALL_TURN_DONE, (payload) => {
    const parsed = TurnDoneEventSchema.safeParse(payload);
    if (!parsed.success) return;
    const { reason, usage } = parsed.data;
    metrics.turns.inc({ reason });
    metrics.modelTokens.inc({ kind: 'input' }, usage.inputTokens);
    metrics.modelTokens.inc({ kind: 'output' }, usage.outputTokens);
    metrics.modelTokens.inc({ kind: 'cache_read' }, usage.cacheReadInputTokens);
    metrics.modelTokens.inc({ kind: 'cache_write' }, usage.cacheCreationInputTokens);
  });
}
