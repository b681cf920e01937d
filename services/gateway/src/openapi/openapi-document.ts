import { createMemoryBus } from '@chunklog/bus';
import { createGateway } from '../create-gateway';
import type { GatewayStore } from '../routes/gateway-context';

/** A store for building the document only: no route runs, so nothing may reach it. */
const noStore = new Proxy({} as GatewayStore, {
  get(_target, property) {
    return () => {
      throw new Error(`the OpenAPI document is built without a store (${String(property)})`);
    };
  },
});

/**
 * The gateway's OpenAPI document, as `/docs/json` serves it, built from the route schemas of a
 * gateway that never listens (no database, an in-process bus).
 */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const bus = createMemoryBus();
  const gateway = await createGateway({
    store: noStore,
    bus,
    auth: { mode: 'keys' },
    ticketSecret: 'openapi-document-only',
  });
  try {
    await gateway.ready();
    // Through JSON: the committed file compares as plain data, without undefined members.
    return JSON.parse(JSON.stringify(gateway.swagger())) as Record<string, unknown>;
  } finally {
    await gateway.close();
    await bus.close();
  }
}

/** The document as committed in docs/openapi.json: two-space JSON and a final newline. */
export function formatOpenApiDocument(document: Record<string, unknown>): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
