/**
 * `npm start`: chunklog in one process on embedded defaults, bound to 127.0.0.1. Only Node's
 * compile cache and PGlite's thread start here; the rest is imported after them, so a later
 * start reuses the code V8 compiled (NODE_DISABLE_COMPILE_CACHE=1 turns the cache off).
 */
import nodeModule from 'node:module';
import v8 from 'node:v8';

const compileCache = nodeModule as { enableCompileCache?: () => unknown };
compileCache.enableCompileCache?.();

// At V8's default tiering budget PGlite's first statements send hundreds of WebAssembly
// functions to the optimizing compiler, whose thread takes a core from the start-up; ten times
// the budget leaves that to the functions that stay hot. The process runs no other WebAssembly.
v8.setFlagsFromString('--wasm-tiering-budget=130000000');

// PGlite's thread next: it loads PGlite and compiles its WebAssembly on another core while this
// one loads the services; the database opens on it once DATA_DIR is known and locked.
const { startPgliteThread } = await import('@chunklog/store/pglite-thread');
const pglite = startPgliteThread();
const { runAllInOne } = await import('./run-all-in-one');
await runAllInOne({ pglite });
