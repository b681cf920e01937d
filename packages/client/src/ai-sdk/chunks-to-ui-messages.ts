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
  const denied = new Set<string>();
  /**
   * Messages holding a call that waited for a person, by call id: a message sent meanwhile
   * starts a new message and denies the call (`interrupted`), and the decision and the result
   * still belong to the call's own part.
   */
  const waitedIn = new Map<string, { message: UIMessage; turnId: string }>();
  /** The tool part of a call of the current answer (or one that waited), and where it is. */
  const callPart = (callId: string, turnId: string) => {
    const holder =
      answer?.turnId === turnId &&
      answer.message.parts.some(
        (part) => part.type === 'dynamic-tool' && part.toolCallId === callId,
      )
        ? answer
        : waitedIn.get(callId);
    if (holder === undefined || holder.turnId !== turnId) return null;
    const parts = holder.message.parts;
    const index = parts.findIndex(
      (part) => part.type === 'dynamic-tool' && part.toolCallId === callId,
    );
    const part = parts[index] as DynamicToolUIPart | undefined;
    return part === undefined ? null : { parts, index, part };
  };
  for (const chunk of chunks) {
    if (chunk.type === 'approval_request' || chunk.type === 'approval_decision') {
      // As the live stream sends them: the call's part waits for, or has, a decision.
      const found = callPart(chunk.data.callId, chunk.turnId);
      if (found === null) continue;
      const { parts, index, part } = found;
      const base = {
        type: 'dynamic-tool' as const,
        toolName: part.toolName,
        toolCallId: part.toolCallId,
        input: part.input,
        providerExecuted: true,
      };
      if (chunk.type === 'approval_request') {
        parts[index] = { ...base, state: 'approval-requested', approval: { id: chunk.id } };
        if (answer !== null) waitedIn.set(chunk.data.callId, answer);
      } else if (part.approval !== undefined) {
        const { decision, reason } = chunk.data;
        if (decision === 'deny') denied.add(chunk.data.callId);
        parts[index] = {
          ...base,
          state: 'approval-responded',
          approval: {
            id: part.approval.id,
            approved: decision === 'approve',
            ...(reason === undefined ? {} : { reason }),
          },
        };
      }
      continue;
    }
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
      if (chunk.type !== 'tool_result') continue;
      const { callId, result, isError } = chunk.data;
      const found = callPart(callId, chunk.turnId);
      if (found === null) continue;
      const { parts, index, part: call } = found;
      const tool = {
        type: 'dynamic-tool' as const,
        toolName: call.toolName,
        toolCallId: callId,
        input: call.input,
        providerExecuted: true,
      };
      const approval = call.approval;
      if (denied.has(callId) && approval !== undefined) {
        parts[index] = {
          ...tool,
          state: 'output-denied',
          approval: { ...approval, approved: false },
        };
      } else {
        const kept =
          approval === undefined ? {} : { approval: { ...approval, approved: true as const } };
        parts[index] = isError
          ? { ...tool, ...kept, state: 'output-error', errorText: toolResultText(result) }
          : { ...tool, ...kept, state: 'output-available', output: result };
      }
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
