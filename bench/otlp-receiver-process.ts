import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** An OTLP receiver in a child process (bench/otlp-receiver-main.ts). */
export interface OtlpReceiverProcess {
  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  /** How many spans it has received. */
  count(): Promise<number>;
  close(): Promise<void>;
}

export async function startOtlpReceiverProcess(): Promise<OtlpReceiverProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./otlp-receiver-main.ts', import.meta.url))],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
  const [ready] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(() => {
      throw new Error('the OTLP receiver process exited before listening');
    }),
  ])) as [{ endpoint: string }];
  return {
    endpoint: ready.endpoint,
    async count() {
      const answer = once(child, 'message') as Promise<[{ count: number }]>;
      child.send('count');
      return (await answer)[0].count;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}
