/**
 * Whether a JSON-like value holds U+0000 in any string or key. Postgres text and jsonb cannot
 * store it, so the store refuses such input with a typed error before the database does.
 * A walk over the values, not a search of the JSON text: there `\u0000` also appears for a
 * harmless backslash followed by "u0000" (a code sample, say), which must be stored as is.
 */
export function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (key.includes('\u0000') || containsNul(record[key])) return true;
    }
  }
  return false;
}
