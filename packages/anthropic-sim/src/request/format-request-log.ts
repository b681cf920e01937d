/** What one line of the simulator's request log says. */
export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
  model?: string;
  stream: boolean;
  usage?: {
    input_tokens: number;
    cache_read_input_tokens: number;
    cache_creation_input_tokens: number;
    output_tokens?: number;
  };
  durationMilliseconds: number;
}

/** One line per request, greppable by key: `POST /v1/messages 200 model=... in=12 ... ms=4`. */
export function formatRequestLog(entry: RequestLogEntry): string {
  const usage = entry.usage;
  return [
    entry.method,
    entry.path,
    String(entry.status),
    `model=${entry.model ?? '-'}`,
    `stream=${entry.stream}`,
    `in=${usage?.input_tokens ?? 0}`,
    `read=${usage?.cache_read_input_tokens ?? 0}`,
    `write=${usage?.cache_creation_input_tokens ?? 0}`,
    `out=${usage?.output_tokens ?? 0}`,
    `ms=${Math.round(entry.durationMilliseconds)}`,
  ].join(' ');
}
