/**
 * A minimal `useChat` page over a chunklog tab (the tab id is the URL's hash), as the client's
 * README shows it: the tab's log loaded as the first messages, then `resume: true`, so a reload
 * mid-answer replays the running answer and goes on streaming.
 */
import { useChat } from '@ai-sdk/react';
import { createClient } from '@chunklog/client';
import { ChunklogChatTransport } from '@chunklog/client/ai-sdk';
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from 'ai';
import { type FormEvent, StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';

const client = createClient({ baseUrl: location.origin });
const transport = new ChunklogChatTransport({ client });
const tabId = location.hash.slice(1);

function App() {
  const [initial, setInitial] = useState<UIMessage[] | null>(null);
  useEffect(() => {
    transport.loadMessages(tabId).then(setInitial);
  }, []);
  return initial === null ? <p>Loading…</p> : <Chat initial={initial} />;
}

function Chat({ initial }: { initial: UIMessage[] }) {
  const { messages, sendMessage, status, error, addToolApprovalResponse } = useChat({
    id: tabId,
    messages: initial,
    transport,
    resume: true,
    // A call that waited for a person goes on once the person answered it.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [text, setText] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    sendMessage({ text });
    setText('');
  };
  return (
    <main data-testid="chat" data-status={status}>
      {messages.map((message) => (
        <section
          key={message.id}
          data-testid="message"
          data-role={message.role}
          data-id={message.id}
        >
          {message.parts.map((part, index) => {
            const key = `${message.id}-${index}`;
            if (part.type === 'text') {
              return (
                <p key={key} data-testid="text" style={{ whiteSpace: 'pre-wrap' }}>
                  {part.text}
                </p>
              );
            }
            if (part.type === 'reasoning') {
              return (
                <details key={key} data-testid="reasoning">
                  {part.text}
                </details>
              );
            }
            if (part.type === 'dynamic-tool') {
              return (
                <div key={key} data-testid="tool" data-name={part.toolName} data-state={part.state}>
                  <pre data-testid="tool-input">{JSON.stringify(part.input)}</pre>
                  {part.state === 'output-available' && (
                    <pre data-testid="tool-output">{JSON.stringify(part.output)}</pre>
                  )}
                  {part.state === 'approval-requested' && (
                    <>
                      <button
                        type="button"
                        onClick={() =>
                          addToolApprovalResponse({ id: part.approval.id, approved: true })
                        }
                      >
                        Approve
                      </button>
                      <button
                        type="button"
                        onClick={() =>
                          addToolApprovalResponse({
                            id: part.approval.id,
                            approved: false,
                            reason: 'not from the browser',
                          })
                        }
                      >
                        Deny
                      </button>
                    </>
                  )}
                </div>
              );
            }
            return null;
          })}
        </section>
      ))}
      {error && <p data-testid="error">{error.message}</p>}
      <form onSubmit={submit}>
        <input
          aria-label="Message"
          value={text}
          onChange={(event) => setText(event.target.value)}
          disabled={status !== 'ready'}
        />
      </form>
    </main>
  );
}

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
