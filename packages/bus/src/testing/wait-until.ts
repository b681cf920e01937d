import { sleep } from '@chunklog/test-infra';

/** Polls until the condition holds; fails with the description after timeoutMs. */
export async function waitUntil(
  condition: () => boolean,
  description: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${description}`);
    await sleep(5);
  }
}
