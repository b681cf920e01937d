import http from 'node:http';

export interface SseConnection {
  close(): void;
}

/** A bare SSE client: calls onEvent with each raw event block as it arrives. */
export function openSse(
  url: string,
  key: string,
  onEvent?: (block: string) => void,
): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false, headers: { authorization: `Bearer ${key}` } });
    request.once('error', reject);
    request.once('response', (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`stream refused: ${response.statusCode}`));
        response.resume();
        return;
      }
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (part: string) => {
        if (!onEvent) return;
        buffer += part;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          onEvent(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
        }
      });
      response.on('error', () => {});
      resolve({ close: () => request.destroy() });
    });
  });
}
