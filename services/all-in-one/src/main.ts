/**
 * `npm start`: chunklog in one process on embedded defaults (PGlite, in-process bus, the
 * simulator as the model unless ANTHROPIC_API_KEY is set), bound to 127.0.0.1.
 */
import { parseAllInOneConfig } from './all-in-one-config';
import { startAllInOne } from './start-all-in-one';

let config: ReturnType<typeof parseAllInOneConfig>;
try {
  config = parseAllInOneConfig(process.env);
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}

const app = await startAllInOne(config).catch((error: unknown) => {
  console.error(`chunklog failed to start: ${(error as Error).message}`);
  process.exit(1);
});

const auth = app.authOff ? '' : ' -H "Authorization: Bearer <your key>"';
console.log(`
chunklog is running at ${app.url}
  data:  ${config.DATA_DIR} (PGlite)
  model: ${app.simulatorUrl ? `the built-in simulator (${app.simulatorUrl}); set ANTHROPIC_API_KEY for the real API` : `${config.MODEL} via the Anthropic API`}
  auth:  ${app.authOff ? 'OFF (loopback only; set API_KEYS=tenant:key to require keys)' : 'API keys required'}
  docs:  ${app.url}/docs

Try it:
  TAB=$(curl -s${auth} -X POST ${app.url}/v1/tabs -H 'content-type: application/json' -d '{"title":"hello"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).tab.id')
  curl -s${auth} -X POST ${app.url}/v1/tabs/$TAB/messages -H 'content-type: application/json' -d '{"text":"Hello! What can you do?"}'
  curl -sN${auth} ${app.url}/v1/tabs/$TAB/events
`);

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`chunklog: ${signal}, shutting down`);
  await app.close();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
