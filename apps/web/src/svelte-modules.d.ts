// TypeScript proper (the root `npm run typecheck`) sees .svelte imports as components; the
// Svelte compiler checks their insides when Vite builds them.
declare module '*.svelte' {
  import type { Component } from 'svelte';

  const component: Component<Record<string, never>>;
  export default component;
}

declare module '*.css' {}
