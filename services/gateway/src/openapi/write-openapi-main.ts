/** `npm run openapi`: writes the gateway's OpenAPI document to docs/openapi.json. */
import { writeFile } from 'node:fs/promises';
import { buildOpenApiDocument, formatOpenApiDocument } from './openapi-document';
import { openApiDocumentPath } from './openapi-document-path';

await writeFile(openApiDocumentPath, formatOpenApiDocument(await buildOpenApiDocument()));
process.stderr.write(`wrote ${openApiDocumentPath}\n`);
