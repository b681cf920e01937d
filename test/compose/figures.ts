import { appendFileSync } from 'node:fs';

/**
 * Prints one measured figure as a plain line, and appends it to $COMPOSE_FIGURES when set, so
 * run.sh can repeat them all at the end of its output.
 */
export function reportFigure(name: string, value: number, unit: string): void {
  const line = `figure: ${name}: ${Math.round(value)} ${unit}`;
  process.stdout.write(`${line}\n`);
  if (process.env.COMPOSE_FIGURES) appendFileSync(process.env.COMPOSE_FIGURES, `${line}\n`);
}
