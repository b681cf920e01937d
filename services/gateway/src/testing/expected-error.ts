import { expect } from 'vitest';

/** The error body the gateway answers with `code` (and `message`, any by default). */
export function expectedError(code: string, message: unknown = expect.any(String)) {
  return { error: { code, message, requestId: expect.any(String) } };
}
