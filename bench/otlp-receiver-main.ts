/**
 * The trace benchmark's OTLP receiver as a process of its own, as a collector is: it counts the
 * spans it receives. Sends `{ endpoint }` to its parent over IPC once listening, and answers a
 * `count` message with `{ count }`; exits when the channel closes.
 */
import { startOtlpReceiver } from '@chunklog/runtime/testing';

const receiver = await startOtlpReceiver({ keepSpans: false });
process.send?.({ endpoint: receiver.endpoint });
process.on('message', (message) => {
  if (message === 'count') process.send?.({ count: receiver.count() });
});
process.on('disconnect', () => {
  void receiver.close().then(() => process.exit(0));
});
