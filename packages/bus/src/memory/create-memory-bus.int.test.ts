import { execFile } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('in-process bus sequences across processes', () => {
  const script = `
    const { createMemoryBus } = await import(${JSON.stringify(
      pathToFileURL(fileURLToPath(new URL('./create-memory-bus.ts', import.meta.url))).href,
    )});
    const bus = createMemoryBus({ logger: { info() {}, warn() {}, error() {} } });
    const sequences = [];
    await bus.consume('intake', async (item) => { sequences.push(item.sequence); await item.ack(); });
    for (let index = 0; index < 3; index++) await bus.enqueue('intake', { index }, { msgId: String(index) });
    while (sequences.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await bus.close();
    console.log(JSON.stringify(sequences));`;

  /** The sequences of three items enqueued by a bus in a process of its own. */
  async function sequencesOfAProcess(): Promise<number[]> {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: fileURLToPath(new URL('../../../..', import.meta.url)), timeout: 120_000 },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as number[];
  }

  it("numbers a restarted process's items above the previous process's", async () => {
    // The all-in-one inbox is in PGlite and outlives the process; its bus does not. Messages
    // still waiting from before a restart are ordered by the sequence they were stored with,
    // so the restarted bus must not number its items from 1 again.
    const before = await sequencesOfAProcess();
    const after = await sequencesOfAProcess();
    expect(before).toHaveLength(3);
    expect(after).toHaveLength(3);
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...before));
    expect([...before, ...after].every((sequence) => Number.isSafeInteger(sequence))).toBe(true);
  }, 300_000);
});
