import { type Bus, BusUnavailableError } from '@chunklog/bus';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLog } from '../testing/captured-log';
import { type GatewayHarness, startGateway } from '../testing/gateway-harness';
import { type Backend, embeddedBackend } from '../testing/test-backends';

/** The store and bus of the embedded backend, with every cancel publish failing. */
async function backendWithCancelPublishFailing(): Promise<Backend> {
  const backend = await embeddedBackend.create();
  const bus: Bus = {
    ...backend.bus,
    async publish(subject, payload) {
      if (subject.endsWith('.cmd.cancel')) {
        throw new BusUnavailableError('the cancel publish failed in this test');
      }
      return backend.bus.publish(subject, payload);
    },
  };
  return { ...backend, bus };
}

describe('POST /v1/tabs/:tabId/cancel when the publish fails', () => {
  let gateway: GatewayHarness;
  const log = capturedLog('warn');

  beforeAll(async () => {
    const backend = await backendWithCancelPublishFailing();
    gateway = await startGateway(
      { name: 'embedded, cancel publish failing', create: async () => backend },
      { logger: log.logger },
    );
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('records the cancel, answers 202, and logs why the fast path failed', async () => {
    const tabId = await gateway.createTab();
    const response = await gateway.request('POST', `/v1/tabs/${tabId}/cancel`);
    expect(response.status).toBe(202);
    // The record is what workers act on: it is there although nobody was told on the bus.
    expect(await gateway.backend.store.cancelGeneration(tabId)).toBe(1);

    const warning = log.lines.find((line) => String(line.msg).includes('not published'));
    expect(warning).toBeDefined();
    // Whoever reads the log must learn why: the error itself, not an empty object.
    expect(JSON.stringify(warning)).toContain('the cancel publish failed in this test');
  });
});
