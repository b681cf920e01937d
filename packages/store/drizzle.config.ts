import { defineConfig } from 'drizzle-kit';

// Paths are relative to the repository root, where `npm run db:generate` runs.
export default defineConfig({
  dialect: 'postgresql',
  schema: './packages/store/src/schema.ts',
  out: './drizzle',
});
