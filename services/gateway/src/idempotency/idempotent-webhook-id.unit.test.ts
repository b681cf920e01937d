import { describe, expect, it } from 'vitest';
import { idempotentTabId } from './idempotent-tab-id';
import { idempotentWebhookId } from './idempotent-webhook-id';

describe('idempotentWebhookId', () => {
  it('names one endpoint per tenant and key, apart from the tab ids of the same key', () => {
    const id = idempotentWebhookId('tenant-a', 'key-1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(idempotentWebhookId('tenant-a', 'key-1')).toBe(id);
    expect(idempotentWebhookId('tenant-b', 'key-1')).not.toBe(id);
    expect(idempotentWebhookId('tenant-a', 'key-2')).not.toBe(id);
    expect(idempotentTabId('tenant-a', 'key-1')).not.toBe(id);
  });
});
