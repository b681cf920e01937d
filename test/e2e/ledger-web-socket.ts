/** A WebSocket stream client (`ws`) whose JSON frames `{ event, data, id? }` feed a StreamLedger. */
import WebSocket from 'ws';
import type { StreamLedger } from './stream-ledger';

export async function openLedgerWebSocket(
  url: string,
  ledger: StreamLedger,
  headers: Record<string, string> = {},
): Promise<{ close(): void }> {
  const socket = new WebSocket(url, { headers });
  // Frames can still arrive during the closing handshake: a client that left ignores them.
  let closed = false;
  socket.on('message', (raw) => {
    if (closed) return;
    const frame = JSON.parse(String(raw)) as { event: string; data: unknown; id?: number };
    ledger.receive(frame.event, frame.data, frame.id === undefined ? undefined : String(frame.id));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => {
      ledger.startConnection();
      resolve();
    });
    socket.once('unexpected-response', (_request, response) =>
      reject(new Error(`websocket refused with ${response.statusCode}`)),
    );
    socket.once('error', reject);
  });
  return {
    close() {
      if (closed) return;
      closed = true;
      ledger.endConnection();
      socket.close();
    },
  };
}
