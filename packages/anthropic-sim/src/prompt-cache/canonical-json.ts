/**
 * JSON with object keys sorted and `cache_control` left out. Cache keys hash this form: the API
 * renders a block's own fields (type, text, ...) into the prompt whatever their order in the
 * body, and breakpoint markers move from step to step, so a block must hash the same whether
 * or not it carries one. (Tool inputs and input schemas are rendered as sent, so the prompt
 * blocks also hash those in their wire key order: see list-prompt-blocks.ts.)
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
