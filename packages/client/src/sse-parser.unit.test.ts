import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser';

const wire =
  'retry: 1000\n\n' +
  ': heartbeat\n\n' +
  'event: chunk-seal\nid: 7\ndata: {"a":1}\n\n' +
  'event: chunk-delta\r\ndata: {"text":"é ✓ 😀"}\r\n\r\n' +
  'data: line one\ndata: line two\n\n' +
  'event: stream-end\rdata:{"after":7}\r\r\n';

const expected = [
  { event: 'chunk-seal', data: '{"a":1}', id: '7' },
  { event: 'chunk-delta', data: '{"text":"é ✓ 😀"}' },
  { event: 'message', data: 'line one\nline two' },
  { event: 'stream-end', data: '{"after":7}' },
];

describe('SseParser', () => {
  it('reads events, ids, comments and every line ending', () => {
    expect(new SseParser().feed(wire)).toEqual(expected);
  });

  it('gives the same events however the text is cut into pieces', () => {
    for (let cut = 0; cut <= wire.length; cut += 1) {
      const parser = new SseParser();
      const events = [...parser.feed(wire.slice(0, cut)), ...parser.feed(wire.slice(cut))];
      expect(events, `cut at ${cut}`).toEqual(expected);
    }
    const parser = new SseParser();
    expect([...wire].flatMap((character) => parser.feed(character))).toEqual(expected);
  });

  it('holds back an event whose blank line has not arrived', () => {
    const parser = new SseParser();
    expect(parser.feed('event: turn-start\ndata: {}\n')).toEqual([]);
    expect(parser.feed('\n')).toEqual([{ event: 'turn-start', data: '{}' }]);
  });
});
