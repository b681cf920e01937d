/**
 * The build's last step (scripts/ascii-only.mjs): bundles rewritten in ASCII, which Node and V8
 * load faster, without changing what the code does.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs build script, without type declarations.
import { asciiOnly } from '../scripts/ascii-only.mjs';

const run = (source: string) => asciiOnly(source) as { source: string; left: number };

describe('asciiOnly', () => {
  it('escapes comments and regular expression literals, and the code behaves the same', () => {
    const source = [
      '// a dash — and a wave 👋',
      '/** JSDoc: 64–71 */',
      // The strings as esbuild writes them, escaped; the regular expressions as it leaves them.
      'export const plain = /(ns|µs|ms)/.exec("5\\u00b5s")[1];',
      'export const unicode = /^👋+$/u.test("\\ud83d\\udc4b\\ud83d\\udc4b");',
      'export const classed = /[é]/.test("\\u00e9");',
    ].join('\n');
    const { source: ascii, left } = run(source);
    expect(left).toBe(0);
    expect(ascii).not.toMatch(/[\u0080-\uffff]/);
    expect(ascii).toContain('// a dash \\u2014 and a wave \\ud83d\\udc4b');
    expect(ascii).toContain('/(ns|\\u00b5s|ms)/');
    // Both versions, run, give the same values.
    const evaluate = (code: string) =>
      new Function(
        `${code.replaceAll('export const', 'const')}; return [plain, unicode, classed];`,
      )();
    expect(evaluate(ascii)).toEqual(['µs', true, true]);
    expect(evaluate(ascii)).toEqual(evaluate(source));
  });

  it('leaves non-ASCII outside comments and regular expressions, and counts it', () => {
    const source = 'const raw = String.raw`é`; // é\n';
    const { source: result, left } = run(source);
    expect(result).toBe('const raw = String.raw`é`; // \\u00e9\n');
    expect(left).toBe(1);
  });

  it('keeps an escaped non-ASCII character in a regular expression as it is', () => {
    const source = 'const matches = /\\é/.test("\\u00e9");';
    const { source: result, left } = run(source);
    expect(result).toBe(source);
    expect(left).toBe(1);
  });

  it('returns ASCII sources untouched', () => {
    const source = 'const a = 1; // plain\n';
    expect(run(source)).toEqual({ source, left: 0 });
  });
});
