import type { z } from 'zod';

/** The environment did not parse; the message names every variable at fault. */
export class EnvError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
    this.name = 'EnvError';
  }
}

/**
 * Parses the environment with `schema`. Values set but empty (`FOO=`, compose's `${FOO:-}`)
 * count as unset. Throws an EnvError naming every problem, not only the first.
 */
export function parseEnv<Schema extends z.ZodType>(
  schema: Schema,
  environment: NodeJS.ProcessEnv,
): z.output<Schema> {
  const present = Object.fromEntries(
    Object.entries(environment).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = schema.safeParse(present);
  if (parsed.success) return parsed.data;
  throw new EnvError(
    parsed.error.issues.map((issue) => {
      const name = issue.path.map(String).join('.');
      return name ? `${name}: ${issue.message}` : issue.message;
    }),
  );
}
