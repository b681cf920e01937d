/**
 * `npm start`: chunklog in one process on embedded defaults, bound to 127.0.0.1. Only Node's
 * compile cache and PGlite's thread start here; the rest is imported after them, so a later
 * start reuses the code V8 compiled (NODE_DISABLE_COMPILE_CACHE=1 turns the cache off).
 */
import nodeModule from 'node:module';
import v8 from 'node:v8';

const compileCache = nodeModule as { enableCompileCache?: () => unknown };
compileCache.enableCompileCache?.();

// PGlite's Postgres is 9 MB of WebAssembly. V8 runs a function in its baseline compiler first and
// recompiles it with its optimizing compiler once it has run enough (the tiering budget): at
// the default budget (13,000,000 on Node.js 24) the first statements already send hundreds of
// functions to be recompiled, on a background thread that then takes a whole core from the
// start-up (about 180 ms of CPU before /readyz). Ten times the budget leaves that work to the
// functions that stay hot after the start; statements run as fast once it has settled. Set before
// the thread compiles the module; the process runs no other WebAssembly.
v8.setFlagsFromString('--wasm-tiering-budget=130000000');

// PGlite's thread next: it loads PGlite and compiles its WebAssembly on another core while this
// one loads the services; the database opens on it once DATA_DIR is known and locked.
const { startPgliteThread } = await import('@chunklog/store/pglite-thread');
const pglite = startPgliteThread();
const { runAllInOne } = await import('./run-all-in-one');
await runAllInOne({ pglite });
