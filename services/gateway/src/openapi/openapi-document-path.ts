import { fileURLToPath } from 'node:url';

/** Where the generated document is committed: docs/openapi.json at the repository root. */
export const openApiDocumentPath = fileURLToPath(
  new URL('../../../../docs/openapi.json', import.meta.url),
);
