import { validateRequest } from '@chunklog/anthropic-sim';
import { describe, expect, it } from 'vitest';
import { ChunkLogWriter } from '../testing';
import { buildRequest } from './build-request';
import { fitChunkForWire } from './fit-chunk-for-wire';

const bytes = (text: string) => new TextEncoder().encode(text).length;

describe('fitChunkForWire', () => {
  it('cuts an oversized tool result to the budget with a note naming its seq', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('Read the file.');
    log.toolCall('toolu_1', 'read_file');
    const huge = log.toolResult('toolu_1', 'é'.repeat(500_000));
    const fitted = fitChunkForWire(huge, 2_000);
    expect(fitted.type === 'tool_result' && typeof fitted.data.result).toBe('string');
    const text = fitted.type === 'tool_result' ? String(fitted.data.result) : '';
    expect(bytes(text)).toBeLessThanOrEqual(2_000);
    expect(text.startsWith('éé')).toBe(true);
    expect(text).toContain(
      "this tool result is 1000000 bytes, more than the model's context allows",
    );
    expect(text).toContain("kept in the tab's log at seq 3");
    expect(fitChunkForWire(huge, 2_000)).toEqual(fitted);
    expect(huge.type === 'tool_result' && huge.data.result).toBe('é'.repeat(500_000));
  });

  it('returns a chunk within the budget as it is', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    const small = log.userText('hi');
    expect(fitChunkForWire(small, 2_000)).toBe(small);
  });

  it('replaces an oversized tool input, and leaves out oversized signed thinking', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    const call = log.toolCall('toolu_1', 'write_file', { body: 'x'.repeat(10_000) });
    const fittedCall = fitChunkForWire(call, 1_000);
    expect(fittedCall.type === 'tool_call' && Object.keys(fittedCall.data.arguments)).toEqual([
      'chunklog_cut',
    ]);
    const thinking = log.thinking('y'.repeat(10_000), 'sig');
    expect(fitChunkForWire(thinking, 1_000).data).toEqual({ text: '' });
  });

  it('keeps every request within the budget per chunk and valid, through buildRequest', () => {
    const log = new ChunkLogWriter();
    log.startTurn();
    log.userText('z'.repeat(50_000));
    log.thinking('w'.repeat(50_000), 'sig-0');
    log.assistantText('Reading.');
    log.toolCall('toolu_1', 'read', { path: 'a'.repeat(50_000) });
    log.toolResult('toolu_1', { rows: 'r'.repeat(50_000) });
    const request = buildRequest({
      model: 'claude-test',
      maxTokens: 4096,
      thinking: { budgetTokens: 1024 },
      maxChunkBytes: 4_000,
      chunks: log.chunks,
    });
    expect(validateRequest(request)).toEqual([]);
    for (const message of request.messages) {
      for (const block of message.content) {
        expect(bytes(JSON.stringify(block))).toBeLessThan(4_500);
      }
    }
  });
});
