/** `npm run sim`: the simulator on its own port (PORT, default 4010) until SIGINT/SIGTERM. */
import { createLogger, parseEnv, runUntilSignal, startStep } from '@chunklog/runtime';
import { createSimulator } from './create-simulator';
import { SimulatorEnvSchema } from './simulator-env';

const env = await startStep('anthropic-sim', 'environment', () =>
  parseEnv(SimulatorEnvSchema, process.env),
);
const logger = createLogger({ service: 'anthropic-sim', level: env.LOG_LEVEL });
const simulator = await startStep('anthropic-sim', `listening on ${env.HOST}:${env.PORT}`, () =>
  createSimulator({
    port: env.PORT,
    host: env.HOST,
    logger: (line) => logger.info(line),
    onInternalError: (error) => logger.error({ err: error }, 'simulator failed'),
  }),
);
logger.info(
  { url: simulator.url },
  'anthropic simulator listening: use it with ANTHROPIC_BASE_URL=<url> and any ANTHROPIC_API_KEY',
);

await runUntilSignal({ logger, stop: simulator.close });
