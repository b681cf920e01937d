/** The nearest-rank percentile of ascending samples (fraction in 0..1); NaN when there are none. */
export function percentile(sorted: number[], fraction: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** The median of samples in any order (nearest rank: the lower middle one for an even count). */
export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}
