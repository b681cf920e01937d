import { describe, expect, it } from 'vitest';
import { mcpCallResultValue } from './mcp-call-result';

describe('mcpCallResultValue', () => {
  it('joins text content, the text the server meant the model to read', () => {
    const result = {
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
      structuredContent: { ignored: true },
    };
    expect(mcpCallResultValue(result)).toBe('one\n\ntwo');
  });

  it('takes the structured content when there is no content, and an empty result else', () => {
    expect(mcpCallResultValue({ content: [], structuredContent: { sum: 3 } })).toEqual({ sum: 3 });
    expect(mcpCallResultValue({})).toBe('');
  });

  it('leaves binary data out of mixed content', () => {
    const value = mcpCallResultValue({
      content: [
        { type: 'text', text: 'a chart' },
        { type: 'image', mimeType: 'image/png', data: 'QUJD' },
      ],
    });
    expect(value).toEqual([
      { type: 'text', text: 'a chart' },
      { type: 'image', mimeType: 'image/png', omitted: '4 base64 characters' },
    ]);
  });
});
