/**
 * A heartbeat that falls between accepting an SSE request and the stream's live subscription:
 * the client must still get an event stream. Run in process (real Postgres and NATS, real HTTP,
 * the `eventsource` client) with a 1 ms heartbeat so the race would hit nearly every request
 * instead of once in a few hundred, as it did in the multi-process resume run with the 15 s
 * default.
 */
import { randomUUID } from 'node:crypto';
import { type Bus, createNatsBus } from '@chunklog/bus';
import { createGateway } from '@chunklog/gateway';
import { type ChunkStore, createPostgresStore } from '@chunklog/store';
import {
  createTestDatabase,
  type TestDatabase,
  testNatsUrl,
  testPostgresUrl,
  testSubjectPrefix,
} from '@chunklog/test-infra';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from './gateway-client';
import { openLedgerEventSource } from './ledger-event-source';
import { StreamLedger } from './stream-ledger';

const postgresUrl = await testPostgresUrl();
const natsUrl = await testNatsUrl();
const reachable = postgresUrl !== null && natsUrl !== null;
if (!reachable) console.warn('!!! SKIPPED: the SSE heartbeat race suite needs Postgres and NATS');

describe.skipIf(!reachable)('SSE stream headers', () => {
  let database: TestDatabase;
  let store: ChunkStore;
  let bus: Bus;
  let gateway: Awaited<ReturnType<typeof createGateway>>;
  let client: GatewayClient;

  beforeAll(async () => {
    database = await createTestDatabase(postgresUrl!);
    store = createPostgresStore({ url: database.url });
    await store.migrate();
    bus = await createNatsBus({ servers: natsUrl!, subjectPrefix: testSubjectPrefix() });
    gateway = await createGateway({
      store,
      bus,
      auth: { mode: 'keys' },
      ticketSecret: `secret-${randomUUID()}`,
      limits: { heartbeatMs: 1 },
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    const address = gateway.server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    const tenant = await store.createTenant({ name: `heartbeat-${randomUUID()}` });
    const key = `ck_${randomUUID()}`;
    await store.addApiKey(tenant.id, key);
    client = new GatewayClient(`http://127.0.0.1:${address.port}`, key);
  });

  afterAll(async () => {
    await gateway?.close();
    await bus?.close();
    await store?.close();
    await database?.drop();
  });

  // Regression test: the heartbeat timer used to write ": heartbeat" on streams whose relay had
  // not yet begun (awaiting its subscription), so Node sent an implicit 200 without
  // `content-type: text/event-stream` and EventSource refused the stream. Fixed in the gateway
  // (af7f4c7: no heartbeat before a stream's headers).
  it('sends event-stream headers even when a heartbeat comes before the subscription', async () => {
    const tabId = await client.createTab('heartbeat race');
    const refused: string[] = [];
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const ledger = new StreamLedger();
      const connection = openLedgerEventSource(
        `${client.baseUrl}/v1/tabs/${tabId}/events`,
        ledger,
        client.authorization,
      );
      await connection.opened.catch((error: Error) => refused.push(error.message));
      connection.close();
    }
    expect(refused).toEqual([]);
  });
});
