/** Ends a `switch` over a union: a compile error when a variant is unhandled, a throw at run time. */
export function assertNever(value: never): never {
  throw new Error(`unexpected variant: ${JSON.stringify(value)}`);
}
