import type { Chunk, Tab } from '@chunklog/chunk-core';
import type {
  ChatRequestOptions,
  ChatTransport,
  DynamicToolUIPart,
  ToolUIPart,
  UIMessage,
  UIMessageChunk,
} from 'ai';
import type { ChunklogClient, DecisionInput, ForkedMessage, MessageMode } from '../client';
import { ApprovalConflictError, ChunklogError } from '../errors';
import type { TabStreamOptions } from '../tab-stream';
import { type AnswerStart, answerStep, initialAnswerState } from './answer-parts';
import { chunksToUIMessages } from './chunks-to-ui-messages';
import { findAnswerStart } from './find-answer-start';
import { type ResumePointStorage, ResumePoints } from './resume-points';

export interface ChunklogChatTransportOptions {
  client: ChunklogClient;
  /**
   * What a message does while a turn runs (default `interrupt`); a request's `body.mode`
   * (`sendMessage(message, { body: { mode } })`) overrides it.
   */
  mode?: MessageMode;
  /** Where a running answer's start survives a page reload; `sessionStorage` by default. */
  storage?: ResumePointStorage;
  /** How the tab's live events are read (`transport: 'sse' | 'websocket'`, backoff, tickets). */
  stream?: Omit<TabStreamOptions, 'after'>;
  /**
   * A chat went on in a fork: `regenerate()` or an edit (`sendMessage({ text, messageId })`)
   * made a new tab sharing the history before the message, and the chat's later requests go to
   * it (`tabOf(chatId)`). Keep `tab.id` to open the chat there again (`useChat({ id: tab.id })`).
   */
  onFork?: (fork: { chatId: string; tab: Tab; reason: 'edit' | 'regenerate' }) => void;
}

const modes: readonly MessageMode[] = ['interrupt', 'enqueue', 'reject'];

/**
 * A `ChatTransport` for the AI SDK's `useChat` over a chunklog tab (chat id = tab id): sends
 * the last user message to the tab and streams the turn that answers it as UI message parts;
 * `reconnectToStream` replays the running answer from its start by seq (where it started is
 * kept in `sessionStorage`, or read from the log), so a reload mid-answer shows it whole and
 * goes on streaming, each character once. `loadMessages` gives a tab's log as messages.
 */
export class ChunklogChatTransport<UI_MESSAGE extends UIMessage = UIMessage>
  implements ChatTransport<UI_MESSAGE>
{
  /** A resume streams the answer from its first part: the SDK rebuilds the message from it. */
  readonly resumeStreamIsReplay = true;
  private readonly client: ChunklogClient;
  private readonly mode: MessageMode | undefined;
  private readonly points: ResumePoints;
  private readonly streamOptions: Omit<TabStreamOptions, 'after'>;
  /** The turn running when `loadMessages` read each tab: its answer may be partial there. */
  private readonly loadedTurns = new Map<string, string>();
  private readonly onFork: ChunklogChatTransportOptions['onFork'];
  /** The tab each chat goes on in, once an edit or a regenerate forked it. */
  private readonly forks = new Map<string, string>();
  /** The user chunk each message sent from here was stored as (a loaded message's id is it). */
  private readonly sentChunks = new Map<string, string>();

  constructor(options: ChunklogChatTransportOptions) {
    this.client = options.client;
    this.mode = options.mode;
    this.points = new ResumePoints(options.storage);
    this.streamOptions = options.stream ?? {};
    this.onFork = options.onFork;
  }

  /** The tab a chat's requests go to: the chat's id, or the fork an edit or regenerate made. */
  tabOf(chatId: string): string {
    return this.forks.get(chatId) ?? chatId;
  }

  async sendMessages(
    options: {
      trigger: 'submit-message' | 'regenerate-message';
      chatId: string;
      messageId: string | undefined;
      messages: UI_MESSAGE[];
      abortSignal: AbortSignal | undefined;
    } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const { messages, abortSignal } = options;
    const chatId = this.tabOf(options.chatId);
    const message = messages.at(-1);
    if (message?.role === 'assistant' && options.trigger === 'submit-message') {
      return this.sendApprovals(chatId, message, options.body, abortSignal);
    }
    if (message?.role !== 'user') {
      throw new Error('the last message to send is not a user message');
    }
    const text = message.parts
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('');
    // A tab is an append-only log: regenerating an answer, or editing a message the chat has
    // (`sendMessage({ text, messageId })`), forks the tab before that message.
    if (options.trigger === 'regenerate-message' || options.messageId !== undefined) {
      const edit = options.trigger === 'submit-message';
      const seq = await this.seqOf(chatId, message.id, abortSignal);
      const made: ForkedMessage = edit
        ? await this.client.edit(chatId, { seq, text }, abortSignal)
        : await this.client.regenerate(chatId, { seq }, abortSignal);
      this.forks.set(options.chatId, made.tab.id);
      this.sentChunks.set(message.id, made.chunkId);
      this.onFork?.({
        chatId: options.chatId,
        tab: made.tab,
        reason: edit ? 'edit' : 'regenerate',
      });
      const start = { after: made.tab.forkSeq ?? seq - 1, userChunkId: made.chunkId };
      this.points.set(made.tab.id, start);
      return this.answer(made.tab.id, { ...start, turnId: null }, abortSignal);
    }
    // Read before sending: the message's user chunk comes after this seq.
    const { lastSeq } = await this.client.getTab(chatId, abortSignal);
    const mode = modeOf(options.body) ?? this.mode;
    const { chunkId } = await this.client.sendMessage(
      chatId,
      {
        text,
        // The same message sent again (a retry) names the same user chunk: stored once.
        idempotencyKey: `ai-sdk:${message.id}`,
        ...(mode === undefined ? {} : { mode }),
      },
      abortSignal,
    );
    this.sentChunks.set(message.id, chunkId);
    const stored = this.points.get(chatId);
    // A retry of a message stored already streams from where its first try did.
    const after = stored?.userChunkId === chunkId ? stored.after : lastSeq;
    this.points.set(chatId, { after, userChunkId: chunkId });
    return this.answer(chatId, { after, userChunkId: chunkId, turnId: null }, abortSignal);
  }

  /**
   * The chat answered tool approval requests (`addToolApprovalResponse`, then
   * `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`): posts the
   * decisions of the calls the tab still waits on and streams the resumed turn into the same
   * message. `body.approvalInputs` (`{ [toolCallId]: input }`, given as the options of the
   * response that sends) approves a call with edited input; the AI SDK has no such field.
   */
  private async sendApprovals(
    chatId: string,
    message: UI_MESSAGE,
    body: object | undefined,
    abortSignal: AbortSignal | undefined,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const { calls, responses } = approvalsOf(message);
    if (responses.length === 0) {
      throw new Error('the last message is an assistant message without approval responses');
    }
    const inputs = approvalInputsOf(body);
    const tab = await this.client.getTab(chatId, abortSignal);
    const waiting = new Set(tab.waiting?.calls.map((call) => call.callId) ?? []);
    const decisions: DecisionInput[] = responses
      .filter((response) => waiting.has(response.callId))
      .map(({ callId, approved, reason }) => {
        if (!approved) {
          return { callId, decision: 'deny', ...(reason ? { reason } : {}) };
        }
        const input = inputs[callId];
        return { callId, decision: 'approve', ...(input === undefined ? {} : { input }) };
      });
    const decided = decisions.map((decision) => decision.callId);
    if (decisions.length > 0) {
      try {
        await this.client.decide(chatId, decisions, {
          // A retry of the same responses is the same request: stored once.
          idempotencyKey: `ai-sdk:${message.id}:${decided.join(',')}`,
          signal: abortSignal,
        });
      } catch (error) {
        // Decided already (another tab, a teammate): the stream shows the decision that counts.
        if (!(error instanceof ApprovalConflictError)) throw error;
      }
    }
    // Calls still undecided keep the turn paused: the message is done until they are answered.
    const open = [...waiting].filter((callId) => !decided.includes(callId));
    if (tab.waiting === null || open.length > 0) {
      return finishedStream();
    }
    return this.answer(
      chatId,
      {
        after: tab.lastSeq,
        userChunkId: null,
        turnId: tab.waiting.turnId,
        continued: { messageId: message.id, calls, decided },
      },
      abortSignal,
    );
  }

  async reconnectToStream(
    options: { chatId: string; abortSignal?: AbortSignal } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const { abortSignal } = options;
    const chatId = this.tabOf(options.chatId);
    const start =
      this.points.get(chatId) ??
      (await findAnswerStart(
        this.client,
        chatId,
        this.loadedTurns.get(chatId) ?? null,
        abortSignal,
      ));
    // The loaded turn stays remembered: React's strict mode, for one, resumes twice.
    return start === null ? null : this.answer(chatId, start, abortSignal);
  }

  /** The tab's whole log as `useChat` messages (`useChat({ id, messages, resume: true })`). */
  async loadMessages(chatId: string, signal?: AbortSignal): Promise<UI_MESSAGE[]> {
    const tabId = this.tabOf(chatId);
    const { activeTurnId } = await this.client.getTab(tabId, signal);
    if (activeTurnId === null) this.loadedTurns.delete(tabId);
    else this.loadedTurns.set(tabId, activeTurnId);
    const chunks: Chunk[] = [];
    for (;;) {
      const after = chunks.at(-1)?.seq ?? 0;
      const page = await this.client.chunks(tabId, { after, limit: 500 }, signal);
      chunks.push(...page.chunks);
      if (!page.hasMore || page.chunks.length === 0) break;
    }
    return chunksToUIMessages(chunks) as UI_MESSAGE[];
  }

  /** The seq of a message of the chat in its tab (its user chunk), read from the log. */
  private async seqOf(tabId: string, messageId: string, signal?: AbortSignal): Promise<number> {
    const chunkId = this.sentChunks.get(messageId) ?? messageId;
    let after = 0;
    for (;;) {
      const page = await this.client.chunks(tabId, { after, limit: 500 }, signal);
      const found = page.chunks.find((chunk) => chunk.id === chunkId && chunk.role === 'user');
      if (found) return found.seq;
      if (!page.hasMore || page.chunks.length === 0) break;
      after = page.chunks.at(-1)?.seq ?? after;
    }
    throw new Error(`message ${messageId} is not a user message of tab ${tabId}`);
  }

  /** The answer from `start` to its end, as UI message parts read from the tab's stream. */
  private answer(
    tabId: string,
    start: AnswerStart,
    signal: AbortSignal | undefined,
  ): ReadableStream<UIMessageChunk> {
    const stream = this.client.stream(tabId, { ...this.streamOptions, after: start.after });
    let state = initialAnswerState(start);
    let release = () => {};
    return new ReadableStream<UIMessageChunk>({
      start: (controller) => {
        let open = true;
        const onAbort = () => end(signal?.reason ?? new DOMException('aborted', 'AbortError'));
        const offEnd = stream.on('end', (error) => {
          end(error ?? new ChunklogError('not_found', 404, 'the tab was deleted'));
        });
        const offEvent = stream.on('event', (event) => {
          const step = answerStep(state, event);
          state = step.state;
          for (const part of step.parts) controller.enqueue(part);
          if (state.finished) {
            this.points.forget(tabId, start.userChunkId);
            end();
          }
        });
        release = () => {
          open = false;
          offEnd();
          offEvent();
          signal?.removeEventListener('abort', onAbort);
          stream.close();
        };
        function end(error?: unknown): void {
          if (!open) return;
          release();
          if (error === undefined) controller.close();
          else controller.error(error);
        }
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
      },
      // The reader stopped (the chat was stopped or went away): stop reading the tab.
      cancel: () => release(),
    });
  }
}

/** The tool parts of a message: each call's approval id, and the approval responses given. */
function approvalsOf(message: UIMessage): {
  calls: Record<string, string>;
  responses: Array<{ callId: string; approved: boolean; reason?: string }>;
} {
  const calls: Record<string, string> = {};
  const responses: Array<{ callId: string; approved: boolean; reason?: string }> = [];
  for (const part of message.parts) {
    if (part.type !== 'dynamic-tool' && !part.type.startsWith('tool-')) continue;
    const tool = part as ToolUIPart | DynamicToolUIPart;
    calls[tool.toolCallId] = tool.approval?.id ?? '';
    if (tool.state === 'approval-responded') {
      responses.push({
        callId: tool.toolCallId,
        approved: tool.approval.approved,
        ...(tool.approval.reason === undefined ? {} : { reason: tool.approval.reason }),
      });
    }
  }
  return { calls, responses };
}

/** `body.approvalInputs`: edited inputs by tool call id (objects only). */
function approvalInputsOf(body: object | undefined): Record<string, Record<string, unknown>> {
  const given = (body as { approvalInputs?: unknown } | undefined)?.approvalInputs;
  const inputs: Record<string, Record<string, unknown>> = {};
  if (typeof given !== 'object' || given === null) return inputs;
  for (const [callId, input] of Object.entries(given)) {
    if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
      inputs[callId] = input as Record<string, unknown>;
    }
  }
  return inputs;
}

/** A stream that only ends the message (nothing to wait for now). */
function finishedStream(): ReadableStream<UIMessageChunk> {
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      controller.enqueue({ type: 'finish', finishReason: 'tool-calls' });
      controller.close();
    },
  });
}

function modeOf(body: object | undefined): MessageMode | undefined {
  const mode = (body as { mode?: unknown } | undefined)?.mode;
  return modes.find((known) => known === mode);
}
