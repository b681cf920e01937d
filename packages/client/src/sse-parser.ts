/** One Server-Sent Event as it came over the wire. */
export interface RawStreamEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * An incremental `text/event-stream` parser (the WHATWG rules the gateway's stream needs):
 * feed it text as it arrives, in pieces cut anywhere, and it returns the events completed.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private id: string | undefined;

  feed(text: string): RawStreamEvent[] {
    this.buffer += text;
    const events: RawStreamEvent[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      if (match === null) break;
      // A lone \r at the end may be the first half of \r\n: wait for the next piece.
      if (match[0] === '\r' && match.index === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = this.line(line);
      if (event !== null) events.push(event);
    }
    return events;
  }

  private line(line: string): RawStreamEvent | null {
    if (line === '') {
      if (this.data.length === 0) {
        this.event = '';
        return null;
      }
      const event: RawStreamEvent = {
        event: this.event || 'message',
        data: this.data.join('\n'),
        ...(this.id === undefined ? {} : { id: this.id }),
      };
      this.event = '';
      this.data = [];
      this.id = undefined;
      return event;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\u0000')) this.id = value;
    return null;
  }
}
