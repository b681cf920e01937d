import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { gatewayVersion } from '../http/gateway-version';
import { buildOpenApiDocument, formatOpenApiDocument } from './openapi-document';
import { openApiDocumentPath } from './openapi-document-path';

interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
}

type Paths = Record<string, Record<string, Operation>>;

const publicPaths = ['/healthz', '/readyz', '/metrics'];
const streamPaths = ['/v1/tabs/{tabId}/events', '/v1/tabs/{tabId}/ws'];

describe('the OpenAPI document', () => {
  let document: Record<string, unknown>;
  let operations: { path: string; method: string; operation: Operation }[];

  beforeAll(async () => {
    document = await buildOpenApiDocument();
    operations = Object.entries(document.paths as Paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
    );
  });

  it('is committed as docs/openapi.json, as the routes generate it', async () => {
    const committed = await readFile(openApiDocumentPath, 'utf8').catch(() => '');
    expect(
      committed,
      'docs/openapi.json is stale: run `npm run openapi` and commit docs/openapi.json',
    ).toBe(formatOpenApiDocument(document));
  });

  it('names every operation, each once', () => {
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(ids.every((id) => typeof id === 'string' && id !== '')).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations.length).toBeGreaterThanOrEqual(16);
  });

  it('documents 500 and 503 with the error shape on every operation', () => {
    for (const { path, method, operation } of operations) {
      for (const status of ['500', '503']) {
        expect(
          JSON.stringify(operation.responses[status]),
          `${method} ${path} ${status}`,
        ).toContain('"#/components/schemas/Error"');
      }
    }
  });

  it('asks the health routes for nothing, the API for a key, the streams for a key or a ticket', () => {
    expect(document.security).toEqual([{ apiKey: [] }]);
    for (const { path, operation } of operations) {
      if (publicPaths.includes(path)) expect(operation.security, path).toEqual([]);
      else if (streamPaths.includes(path)) {
        expect(operation.security, path).toEqual([{ apiKey: [] }, { streamTicket: [] }]);
      } else expect(operation.security, path).toBeUndefined();
    }
    const schemes = (document.components as { securitySchemes: Record<string, unknown> })
      .securitySchemes;
    expect(schemes.streamTicket).toMatchObject({ type: 'apiKey', in: 'query', name: 'ticket' });
  });

  it('points the stream routes at the stream event schemas', () => {
    const schemas = (document.components as { schemas: Record<string, unknown> }).schemas;
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining(['StreamEvent', 'StreamLiveEvent', 'StreamEndEvent', 'Chunk']),
    );
    for (const { path, operation } of operations.filter(({ path }) => streamPaths.includes(path))) {
      expect(JSON.stringify(operation), path).toContain('"#/components/schemas/StreamEvent"');
    }
  });

  it("carries the gateway's version and refers to nothing outside itself", () => {
    expect((document.info as { version: string }).version).toBe(gatewayVersion);
    const text = JSON.stringify(document);
    const references = [...text.matchAll(/"\$ref":"([^"]*)"/g)].map((match) => match[1]);
    expect(references.length).toBeGreaterThan(0);
    for (const reference of references) expect(reference).toMatch(/^#\/components\/schemas\//);
    expect(text).not.toMatch(/https?:\/\/|\.\.\/|\.md\b/);
  });
});
