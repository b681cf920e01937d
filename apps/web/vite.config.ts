import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vite';

// `npm run dev -w @chunklog/web` serves the app with hot reload and sends API calls to a
// running `npm start` (override with CHUNKLOG_URL).
const api = process.env.CHUNKLOG_URL ?? 'http://127.0.0.1:8787';

export default defineConfig({
  plugins: [svelte()],
  build: { target: 'es2022', sourcemap: true },
  server: { proxy: { '/v1': { target: api, ws: true } } },
});
