/** The chat's window: 600 chunks, pages of 100, the newest evicted too when scrolling far back. */
const defaultWindowOptions = { limit: 600, pageSize: 100, evictNewer: true };

/**
 * The window options, with overrides from the page's query string for measuring what the
 * limits save (`npm run bench web`): `?window=unbounded` keeps every chunk paged in, `?page=N`
 * sets the page size (at most 500, the API's largest page).
 */
export function windowOptions(search: string): typeof defaultWindowOptions {
  const query = new URLSearchParams(search);
  const page = Number(query.get('page'));
  const pageSize = Number.isInteger(page) && page >= 1 ? Math.min(page, 500) : 100;
  if (query.get('window') === 'unbounded') {
    return { limit: Number.MAX_SAFE_INTEGER, pageSize, evictNewer: false };
  }
  return {
    ...defaultWindowOptions,
    limit: Math.max(defaultWindowOptions.limit, pageSize * 2),
    pageSize,
  };
}
