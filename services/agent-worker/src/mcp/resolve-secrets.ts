import type { SecretReference } from '@chunklog/chunk-core';

/** A secret reference whose environment variable the worker does not have. */
export class MissingSecretError extends Error {
  constructor(variable: string) {
    super(`The worker has no environment variable ${variable} (an MCP server secret)`);
    this.name = 'MissingSecretError';
  }
}

/**
 * Reads each reference's variable from the environment. Called at every use, not once, so a
 * rotated secret (a new environment in a restarted process, or a test's) is what is sent.
 */
export function resolveSecrets(
  references: Readonly<Record<string, SecretReference>> | undefined,
  environment: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [key, reference] of Object.entries(references ?? {})) {
    const value = environment[reference.secret];
    if (value === undefined) throw new MissingSecretError(reference.secret);
    resolved[key] = value;
  }
  return resolved;
}
