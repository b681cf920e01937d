import { listenEnv, logEnv } from '@chunklog/runtime';
import { z } from 'zod';

/** The environment of `npm run sim`, the simulator on its own port. */
export const SimulatorEnvSchema = z.object({ ...listenEnv({ port: 4010 }), ...logEnv });
