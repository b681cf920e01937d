/**
 * Reads Prometheus text exposition into `series → value`, keyed as written (`name{labels}`),
 * so tests check what a scraper would see rather than prom-client's internals.
 */
export function parseExposition(text: string): Map<string, number> {
  const series = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const split = line.lastIndexOf(' ');
    series.set(line.slice(0, split), Number(line.slice(split + 1)));
  }
  return series;
}
