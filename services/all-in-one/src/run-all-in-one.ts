import nodeModule from 'node:module';
import { startStep } from '@chunklog/runtime/start-failure';
import type { PgliteThread } from '@chunklog/store/pglite-thread';
import { parseAllInOneConfig } from './all-in-one-config';
import { openDataDir } from './open-data-dir';
import { StartTimeline } from './start-timeline';

/**
 * The all-in-one process: reads the environment, starts every service and serves until SIGINT
 * or SIGTERM. It sends PGlite the open first, and loads the rest while the database opens.
 */
export async function runAllInOne(options: { pglite?: PgliteThread } = {}): Promise<void> {
  const timeline = new StartTimeline();
  timeline.mark('config modules loaded');
  const config = await startStep('all-in-one', 'environment', () =>
    parseAllInOneConfig(process.env),
  );
  const dataDir = await startStep('all-in-one', 'start-up', () =>
    openDataDir(config, options.pglite),
  );
  timeline.mark('database open sent');
  const [
    { createLogger, runUntilSignal, startTracing },
    { openAllInOneDatabase },
    { startAllInOne },
  ] = await Promise.all([
    import('@chunklog/runtime'),
    import('./open-database'),
    import('./start-all-in-one'),
  ]);
  timeline.mark('modules loaded');
  // No `service` at the root: the gateway, the worker and the simulator each bind theirs.
  const logger = createLogger({ level: config.LOG_LEVEL });
  const log = logger.child({ service: 'all-in-one' });
  const database = await startStep('all-in-one', 'start-up', () =>
    openAllInOneDatabase(config, logger, dataDir),
  );
  // Before the services are built, so everything traces into it (docs/architecture.md, "Tracing").
  const tracing = await startTracing({ serviceName: 'chunklog-all-in-one' });
  timeline.mark('tracing started');
  const app = await startStep('all-in-one', 'start-up', () =>
    startAllInOne(config, { logger, timeline, database }),
  );
  log.debug({ msSinceProcessStart: timeline.marks() }, 'start-up timeline');
  // The code compiled up to now goes to Node's compile cache (main.ts), for the next start.
  (nodeModule as { flushCompileCache?: () => void }).flushCompileCache?.();

  const model = app.simulatorUrl
    ? `the built-in simulator (${app.simulatorUrl}); set ANTHROPIC_API_KEY for the real API`
    : `${config.MODEL} via the Anthropic API`;
  log.info(
    {
      url: app.url,
      dataDir: config.DATA_DIR,
      model,
      auth: app.authOff ? 'off' : 'keys',
      tracing: tracing.enabled ? 'on' : `off (${tracing.offReason})`,
    },
    'chunklog is running',
  );

  // For the person at the terminal, on stderr: stdout stays JSON lines for log tools.
  const auth = app.authOff ? '' : ' -H "Authorization: Bearer <your key>"';
  process.stderr.write(`
chunklog is running at ${app.url}
  chat:  ${app.url}/ (open it in a browser)
  data:  ${config.DATA_DIR} (PGlite)
  model: ${model}
  auth:  ${app.authOff ? 'OFF (loopback only; set API_KEYS=tenant:key to require keys)' : 'API keys required'}
  docs:  ${app.url}/docs

Try it:
  TAB=$(curl -s${auth} -X POST ${app.url}/v1/tabs -H 'content-type: application/json' -d '{"title":"hello"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).tab.id')
  curl -s${auth} -X POST ${app.url}/v1/tabs/$TAB/messages -H 'content-type: application/json' -d '{"text":"Hello! What can you do?"}'
  curl -sN${auth} ${app.url}/v1/tabs/$TAB/events

`);

  await runUntilSignal({
    logger: log,
    async stop() {
      await app.close();
      await tracing.shutdown();
    },
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  });
}
