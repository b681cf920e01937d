import { nameBasedUuid } from './name-based-uuid';

/** The namespace of tab ids derived from idempotency keys (a random UUID, fixed forever). */
const TABS_NAMESPACE = '6d1f3c52-8e0b-4f7a-9a2c-3b5e7d9f1a04';

/**
 * The id a tab created with an Idempotency-Key gets: the same tenant and key always name the
 * same tab, so a retry of a create whose answer was lost finds the tab instead of adding one.
 */
export function idempotentTabId(tenantId: string, idempotencyKey: string): string {
  // JSON keeps the two parts apart whatever characters either holds.
  return nameBasedUuid(TABS_NAMESPACE, JSON.stringify([tenantId, idempotencyKey]));
}
