import type { Chunk } from '@chunklog/chunk-core';
import type { ChatRequestOptions, ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import type { ChunklogClient, MessageMode } from '../client';
import { ChunklogError } from '../errors';
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

  constructor(options: ChunklogChatTransportOptions) {
    this.client = options.client;
    this.mode = options.mode;
    this.points = new ResumePoints(options.storage);
    this.streamOptions = options.stream ?? {};
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
    const { chatId, messages, abortSignal } = options;
    if (options.trigger === 'regenerate-message') {
      throw new Error(
        'a chunklog tab is an append-only log: send a new message instead of regenerating one',
      );
    }
    const message = messages.at(-1);
    if (message?.role !== 'user') {
      throw new Error('the last message to send is not a user message');
    }
    const text = message.parts
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('');
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
    const stored = this.points.get(chatId);
    // A retry of a message stored already streams from where its first try did.
    const after = stored?.userChunkId === chunkId ? stored.after : lastSeq;
    this.points.set(chatId, { after, userChunkId: chunkId });
    return this.answer(chatId, { after, userChunkId: chunkId, turnId: null }, abortSignal);
  }

  async reconnectToStream(
    options: { chatId: string; abortSignal?: AbortSignal } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const { chatId, abortSignal } = options;
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
  async loadMessages(tabId: string, signal?: AbortSignal): Promise<UI_MESSAGE[]> {
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

function modeOf(body: object | undefined): MessageMode | undefined {
  const mode = (body as { mode?: unknown } | undefined)?.mode;
  return modes.find((known) => known === mode);
}
