/** A tenant's client of one gateway over real HTTP, validating every answer with zod. */
import { type Chunk, ChunkSchema, TabSchema } from '@chunklog/chunk-core';
import { z } from 'zod';

const TabResponseSchema = z.object({ tab: TabSchema });
const ChunkPageSchema = z.object({
  chunks: z.array(ChunkSchema),
  total: z.number().int(),
  hasMore: z.boolean(),
});
const MessageAcceptedSchema = z.object({ chunkId: z.uuid() });
const TicketSchema = z.object({ ticket: z.string(), expiresAt: z.number() });

/** The largest page the API serves (docs/architecture.md, "HTTP API"). */
const PAGE_LIMIT = 500;

export class GatewayClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey: string,
  ) {}

  get authorization(): Record<string, string> {
    return { authorization: `Bearer ${this.apiKey}` };
  }

  async createTab(title = 'e2e'): Promise<string> {
    const body = await this.json('POST', '/v1/tabs', { title }, 201);
    return TabResponseSchema.parse(body).tab.id;
  }

  async getTab(tabId: string) {
    return TabResponseSchema.parse(await this.json('GET', `/v1/tabs/${tabId}`, undefined, 200)).tab;
  }

  async sendMessage(
    tabId: string,
    text: string,
    mode: 'interrupt' | 'enqueue' | 'reject' = 'enqueue',
  ): Promise<string> {
    const body = await this.json('POST', `/v1/tabs/${tabId}/messages`, { text, mode }, 202);
    return MessageAcceptedSchema.parse(body).chunkId;
  }

  async streamTicket(tabId: string): Promise<string> {
    const body = await this.json('POST', `/v1/tabs/${tabId}/stream-tickets`, undefined, 201);
    return TicketSchema.parse(body).ticket;
  }

  /** Every chunk of the tab through the REST pages, forwards from the start. */
  async readAllChunks(tabId: string): Promise<Chunk[]> {
    const chunks: Chunk[] = [];
    for (;;) {
      const after = chunks.at(-1)?.seq ?? 0;
      const body = await this.json(
        'GET',
        `/v1/tabs/${tabId}/chunks?after=${after}&limit=${PAGE_LIMIT}`,
        undefined,
        200,
      );
      const page = ChunkPageSchema.parse(body);
      chunks.push(...page.chunks);
      if (!page.hasMore || page.chunks.length === 0) return chunks;
    }
  }

  private async json(
    method: string,
    path: string,
    body: unknown,
    expectedStatus: number,
  ): Promise<unknown> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        ...this.authorization,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== expectedStatus) {
      throw new Error(`${method} ${path}: ${response.status} ${text}`);
    }
    return text ? JSON.parse(text) : null;
  }
}
