import type { TabView, TabViewSnapshot } from '@chunklog/client';

/**
 * The view as a Svelte store that hands out at most one snapshot per animation frame. A stream
 * delivers a delta per token, and a burst of them (a busy moment, a resume) would otherwise
 * render, parse and sanitize the open block once each, back to back in one long task.
 */
export function perFrame(view: TabView): {
  subscribe(run: (snapshot: TabViewSnapshot) => void): () => void;
} {
  return {
    subscribe(run) {
      run(view.getSnapshot());
      let frame = 0;
      const unsubscribe = view.subscribe(() => {
        if (frame !== 0) return;
        frame = requestAnimationFrame(() => {
          frame = 0;
          run(view.getSnapshot());
        });
      });
      return () => {
        unsubscribe();
        cancelAnimationFrame(frame);
      };
    },
  };
}
