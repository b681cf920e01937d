import { describe, expect, it } from 'vitest';
import { MissingSecretError, resolveSecrets } from './resolve-secrets';

describe('resolveSecrets', () => {
  it('reads each referenced variable from the environment', () => {
    const references = { Authorization: { secret: 'MCP_SECRET_A' } };
    expect(resolveSecrets(references, { MCP_SECRET_A: 'Bearer a' })).toEqual({
      Authorization: 'Bearer a',
    });
    expect(resolveSecrets(undefined, {})).toEqual({});
  });

  it('names a missing variable, never a value', () => {
    const references = { Authorization: { secret: 'MCP_SECRET_MISSING' } };
    expect(() => resolveSecrets(references, { MCP_SECRET_OTHER: 'x' })).toThrow(MissingSecretError);
    expect(() => resolveSecrets(references, {})).toThrow(/MCP_SECRET_MISSING/);
  });
});
