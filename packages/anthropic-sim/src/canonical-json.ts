/**
 * JSON with object keys sorted and `cache_control` left out. Cache keys hash this form: the
 * real API ignores key order, and breakpoint markers move from step to step, so a block must
 * hash the same whether or not it carries one.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(normalize(value));
}

function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    if (key === 'cache_control') continue;
    const entry = (value as Record<string, unknown>)[key];
    if (entry === undefined) continue;
    sorted[key] = normalize(entry);
  }
  return sorted;
}
