/**
 * The published package, as a stranger gets it: built, packed with npm, installed from the
 * tarball into a folder outside this repository, and used there by a plain Node script (and
 * type-checked as a TypeScript consumer) against a real gateway.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ChunklogClient } from '@chunklog/client';
import { readLog, waitFor } from '@chunklog/client/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RealGateway, startRealGateway } from '../support/real-gateway';

const run = promisify(execFile);
const packageRoot = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'packages',
  'client',
);
const repositoryRoot = resolve(packageRoot, '..', '..');

const chatScript = `
import { createClient } from '@chunklog/client';

const client = createClient({ baseUrl: process.env.CHUNKLOG_URL, apiKey: process.env.CHUNKLOG_KEY });
const tab = await client.createTab({ title: 'packed' });
let text = '';
for await (const event of client.stream(tab.id)) {
  if (event.event === 'stream-live') await client.sendMessage(tab.id, { text: process.argv[2] });
  if (event.event === 'chunk-delta') text += event.data.text;
  if (event.event === 'turn-done') break;
}
console.log(JSON.stringify({ tabId: tab.id, text }));
`;

const typedConsumer = `
import { ChunklogError, createClient, type Tab, type TabViewSnapshot } from '@chunklog/client';

const client = createClient({ baseUrl: 'http://127.0.0.1:8787' });
export async function newest(): Promise<number> {
  const tab: Tab = await client.createTab();
  // @ts-expect-error lastSeq is a number: were the declarations unresolved (any), this would fail
  const wrong: string = tab.lastSeq;
  const view = client.view(tab.id, { limit: 100 });
  const snapshot: TabViewSnapshot = view.getSnapshot();
  const first = snapshot.groups[0]?.chunks[0];
  if (first && !first.open && first.type === 'tool_call') return first.data.arguments ? 1 : 0;
  try {
    await client.sendMessage(tab.id, { text: 'hi', mode: 'enqueue' });
  } catch (error) {
    if (error instanceof ChunklogError && error.code === 'conflict') return error.status;
  }
  return tab.lastSeq + wrong.length;
}
`;

const aiSdkScript = `
import { createClient } from '@chunklog/client';
import { ChunklogChatTransport } from '@chunklog/client/ai-sdk';
import { readUIMessageStream } from 'ai';

const client = createClient({ baseUrl: process.env.CHUNKLOG_URL, apiKey: process.env.CHUNKLOG_KEY });
const tab = await client.createTab({ title: 'packed useChat' });
const transport = new ChunklogChatTransport({ client });
const stream = await transport.sendMessages({
  trigger: 'submit-message',
  chatId: tab.id,
  messageId: undefined,
  messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: process.argv[2] }] }],
  abortSignal: undefined,
});
let message;
for await (const update of readUIMessageStream({ stream })) message = update;
console.log(JSON.stringify({ tabId: tab.id, message }));
`;

const typedAiSdkConsumer = `
import { createClient } from '@chunklog/client';
import { ChunklogChatTransport, chunksToUIMessages } from '@chunklog/client/ai-sdk';
import type { ChatTransport, UIMessage } from 'ai';

const client = createClient({ baseUrl: 'http://127.0.0.1:8787' });
export const transport: ChatTransport<UIMessage> = new ChunklogChatTransport({ client, mode: 'enqueue' });
export const messages: UIMessage[] = chunksToUIMessages([]);
// @ts-expect-error a mode is interrupt, enqueue or reject: were the declarations any, this would pass
export const wrong = new ChunklogChatTransport({ client, mode: 'later' });
`;

describe('the packed package', () => {
  const apiKey = `ck_${crypto.randomUUID()}`;
  let gateway: RealGateway;
  let consumer: string;

  beforeAll(async () => {
    gateway = await startRealGateway({ apiKey });
    consumer = mkdtempSync(join(tmpdir(), 'chunklog-client-consumer-'));
    await run('npm', ['run', 'build'], { cwd: packageRoot });
    await run(
      'npm',
      ['pack', join(packageRoot, 'dist', 'package'), '--pack-destination', consumer],
      {
        cwd: consumer,
      },
    );
    const tarball = readdirSync(consumer).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error('npm pack wrote no tarball');
    writeFileSync(
      join(consumer, 'package.json'),
      JSON.stringify({ type: 'module', private: true }),
    );
    // `ai` is the transport's optional peer: a useChat app has it already.
    const { devDependencies } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        `./${tarball}`,
        `ai@${devDependencies.ai}`,
      ],
      { cwd: consumer },
    );
  }, 300_000);
  afterAll(async () => {
    await gateway?.close();
    if (consumer) rmSync(consumer, { recursive: true, force: true });
  });

  it('installs with nothing from this repository and chats from a plain Node script', async () => {
    const installed = readdirSync(join(consumer, 'node_modules', '@chunklog'));
    expect(installed).toEqual(['client']);
    writeFileSync(join(consumer, 'chat.mjs'), chatScript);
    const { stdout } = await run('node', ['chat.mjs', '[[sim: words 40]] hello from outside'], {
      cwd: consumer,
      env: { ...process.env, CHUNKLOG_URL: gateway.url, CHUNKLOG_KEY: apiKey },
    });
    const { tabId, text } = JSON.parse(stdout) as { tabId: string; text: string };
    const log = await readLog(new ChunklogClient({ baseUrl: gateway.url, apiKey }), tabId);
    const answer = log.find((chunk) => chunk.role === 'assistant' && chunk.type === 'text');
    expect(answer?.type === 'text' && answer.data.text).toBe(text);
    expect(text.split(' ')).toHaveLength(40);
  });

  it('streams an answer through the AI SDK transport entry, folded by the SDK', async () => {
    writeFileSync(join(consumer, 'ai-sdk-chat.mjs'), aiSdkScript);
    const { stdout } = await run('node', ['ai-sdk-chat.mjs', '[[sim: words 25]]'], {
      cwd: consumer,
      env: { ...process.env, CHUNKLOG_URL: gateway.url, CHUNKLOG_KEY: apiKey },
    });
    const { tabId, message } = JSON.parse(stdout) as {
      tabId: string;
      message: { role: string; parts: { type: string; text?: string }[] };
    };
    const log = await readLog(new ChunklogClient({ baseUrl: gateway.url, apiKey }), tabId);
    const answer = log.find((chunk) => chunk.role === 'assistant' && chunk.type === 'text');
    expect(message.role).toBe('assistant');
    expect(message.parts.find((part) => part.type === 'text')?.text).toBe(
      answer?.type === 'text' ? answer.data.text : null,
    );
  });

  it("runs the README's ten-line Node chat as written, against a gateway with auth off", async () => {
    const readme = readFileSync(join(packageRoot, 'README.md'), 'utf8');
    const example = /```js\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(example).toContain("'http://127.0.0.1:8787'");
    const open = await startRealGateway();
    writeFileSync(
      join(consumer, 'readme-chat.mjs'),
      example.replace("'http://127.0.0.1:8787'", `'${open.url}'`),
    );
    const chat = spawn('node', ['readme-chat.mjs'], { cwd: consumer });
    try {
      let output = '';
      chat.stdout.on('data', (data: Buffer) => {
        output += data.toString();
      });
      await waitFor('the prompt', () => output.includes('> '));
      chat.stdin.write('[[sim: text "ten lines are enough"]] hello\n');
      await waitFor('the answer, then the next prompt', () => output.split('> ').length >= 3);
      expect(output).toContain('ten lines are enough');
    } finally {
      chat.kill();
      await open.close();
    }
  });

  it('bundles into a plain Vite page for browsers, with nothing of Node or zod in it', async () => {
    const page = join(consumer, 'page');
    mkdirSync(page, { recursive: true });
    writeFileSync(
      join(page, 'index.html'),
      '<!doctype html><pre id="out"></pre><script type="module" src="./main.js"></script>',
    );
    writeFileSync(
      join(page, 'main.js'),
      `import { createClient } from '@chunklog/client';
const client = createClient({ baseUrl: location.origin });
const view = client.view(new URLSearchParams(location.search).get('tab'));
view.subscribe(() => { document.getElementById('out').textContent = JSON.stringify(view.getSnapshot().groups); });
`,
    );
    const vite = join(repositoryRoot, 'node_modules', '.bin', 'vite');
    await run(vite, ['build', page, '--outDir', join(page, 'dist'), '--logLevel', 'warn'], {
      cwd: consumer,
    });
    const assets = readdirSync(join(page, 'dist', 'assets')).filter((name) => name.endsWith('.js'));
    expect(assets).toHaveLength(1);
    const bundle = readFileSync(join(page, 'dist', 'assets', assets[0] ?? ''), 'utf8');
    expect(bundle).toContain('text/event-stream');
    expect(bundle).not.toMatch(/\bnode:|require\(|process\.env|Buffer\./);
    // The client validates nothing on arrival: chunk-core's zod schemas stay out of the page.
    expect(bundle).not.toContain('ZodError');
    // Nor the AI SDK transport, which has an entry of its own.
    expect(bundle).not.toContain('resumeStreamIsReplay');
  });

  it('type-checks TypeScript consumers under nodenext resolution with its declarations', async () => {
    writeFileSync(join(consumer, 'consumer.ts'), typedConsumer);
    writeFileSync(join(consumer, 'ai-sdk-consumer.ts'), typedAiSdkConsumer);
    const compilerOptions = {
      target: 'es2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types: [],
    };
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['consumer.ts'] }),
    );
    // `ai`'s own declarations need Node's types and more: only ours are checked to the letter.
    writeFileSync(
      join(consumer, 'tsconfig.ai-sdk.json'),
      JSON.stringify({
        compilerOptions: { ...compilerOptions, skipLibCheck: true },
        files: ['ai-sdk-consumer.ts'],
      }),
    );
    const tsc = join(repositoryRoot, 'node_modules', '.bin', 'tsc');
    for (const project of ['tsconfig.json', 'tsconfig.ai-sdk.json']) {
      const result = await run(tsc, ['-p', join(consumer, project)]).then(
        () => '',
        (error: { stdout?: string }) => error.stdout ?? String(error),
      );
      expect(result).toBe('');
    }
  });
});
