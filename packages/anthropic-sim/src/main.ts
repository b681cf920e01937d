/** `npm run sim`: the simulator on its own port (PORT, default 4010) until SIGINT/SIGTERM. */
import { z } from 'zod';
import { createSimulator } from './create-simulator';

const environment = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65_535).default(4010),
    HOST: z.string().min(1).default('127.0.0.1'),
  })
  .parse(process.env);

const simulator = await createSimulator({ port: environment.PORT, host: environment.HOST });
console.log(`anthropic simulator listening on ${simulator.url}`);
console.log(`use it with ANTHROPIC_BASE_URL=${simulator.url} and any ANTHROPIC_API_KEY`);

const shutdown = async () => {
  await simulator.close();
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
