import { Ajv, type ValidateFunction } from 'ajv';

/**
 * Checks a person's edited tool input against the tool's JSON schema, as the tool declared it
 * (an MCP server's or a remote tool's: untrusted). Keywords that run a regular expression
 * (`pattern`, `patternProperties`) or a format check are left out, so a schema cannot make the
 * gateway spend its time on a crafted expression; the tool still checks its own input. A schema
 * the validator cannot compile checks only that the input is an object.
 */
export function checkEditedInput(
  schema: Record<string, unknown> | undefined,
  input: Record<string, unknown>,
): string | null {
  if (schema === undefined) return null;
  const validate = validatorFor(schema);
  if (validate === null || validate(input)) return null;
  const first = validate.errors?.[0];
  if (!first) return 'does not match the tool input schema';
  return `${first.instancePath || '/'} ${first.message ?? 'is invalid'}`;
}

const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
const cache = new Map<string, ValidateFunction | null>();
const MAX_CACHED = 500;
const MAX_SCHEMA_BYTES = 64 * 1024;

function validatorFor(schema: Record<string, unknown>): ValidateFunction | null {
  const key = JSON.stringify(schema);
  if (key.length > MAX_SCHEMA_BYTES) return null;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  let validate: ValidateFunction | null;
  try {
    validate = ajv.compile(withoutExpressions(schema) as object);
  } catch {
    validate = null;
  }
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(key, validate);
  return validate;
}

const EXPRESSION_KEYWORDS = new Set(['pattern', 'patternProperties', 'format', '$id', '$ref']);

function withoutExpressions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutExpressions);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !EXPRESSION_KEYWORDS.has(key))
      .map(([key, child]) => [key, withoutExpressions(child)]),
  );
}
