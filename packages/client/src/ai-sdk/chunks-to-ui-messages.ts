import { assertNever, type Chunk, toolResultText } from '@chunklog/chunk-core';
import type { DynamicToolUIPart, UIMessage } from 'ai';
import { answerPartKind, chunkText } from './answer-chunk';

/**
 * A tab's log (ascending seq) as `useChat` messages: each user text a user message (id: its
 * chunk id), each run of a turn's answer chunks between user chunks an assistant message (id:
 * its first answer chunk's id, as the live stream names it), with a step part at each model
 * step and tool calls as dynamic tools run by the server, their results folded in.
 */
export function chunksToUIMessages(chunks: readonly Chunk[]): UIMessage[] {
  const messages: UIMessage[] = [];
  let answer: { message: UIMessage; turnId: string; step: number } | null = null;
  for (const chunk of chunks) {
    if (chunk.type === 'text' && chunk.role === 'user') {
      messages.push({
        id: chunk.id,
        role: 'user',
        parts: [{ type: 'text', text: chunk.data.text }],
      });
      answer = null;
      continue;
    }
    const kind = answerPartKind(chunk);
    if (kind === null) continue;
    if (kind === 'tool-result') {
      if (chunk.type !== 'tool_result' || answer?.turnId !== chunk.turnId) continue;
      const { callId, result, isError } = chunk.data;
      const index = answer.message.parts.findIndex(
        (part) => part.type === 'dynamic-tool' && part.toolCallId === callId,
      );
      const call = answer.message.parts[index] as DynamicToolUIPart | undefined;
      if (call === undefined) continue;
      const tool = {
        type: 'dynamic-tool' as const,
        toolName: call.toolName,
        toolCallId: callId,
        input: call.input,
        providerExecuted: true,
      };
      answer.message.parts[index] = isError
        ? { ...tool, state: 'output-error', errorText: toolResultText(result) }
        : { ...tool, state: 'output-available', output: result };
      continue;
    }
    if (answer === null || answer.turnId !== chunk.turnId) {
      answer = {
        message: { id: chunk.id, role: 'assistant', parts: [] },
        turnId: chunk.turnId,
        step: -1,
      };
      messages.push(answer.message);
    }
    if (answer.step !== chunk.step) {
      answer.message.parts.push({ type: 'step-start' });
      answer.step = chunk.step;
    }
    switch (kind) {
      case 'text':
        answer.message.parts.push({ type: 'text', text: chunkText(chunk), state: 'done' });
        break;
      case 'reasoning':
        answer.message.parts.push({
          type: 'reasoning',
          id: chunk.id,
          text: chunkText(chunk),
          state: 'done',
        });
        break;
      case 'tool-call':
        if (chunk.type !== 'tool_call') break;
        answer.message.parts.push({
          type: 'dynamic-tool',
          toolName: chunk.data.name,
          toolCallId: chunk.data.callId,
          state: 'input-available',
          input: chunk.data.arguments,
          providerExecuted: true,
        });
        break;
      default:
        assertNever(kind);
    }
  }
  return messages;
}
