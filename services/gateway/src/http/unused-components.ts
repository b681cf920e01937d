/**
 * The document without the `<Id>Input` schema components no route refers to: the registry gives
 * every named schema an input and an output variant, and most are only ever answered.
 */
export function withoutUnusedInputComponents<Document extends object>(
  document: Document,
): Document {
  const components = (document as { components?: { schemas?: Record<string, unknown> } })
    .components;
  const schemas = components?.schemas;
  if (schemas === undefined) return document;
  const inputNames = Object.keys(schemas).filter((name) => name.endsWith('Input'));
  // A component may refer to another: drop unreferenced ones until none is left to drop.
  let kept = { ...schemas };
  for (;;) {
    const text = JSON.stringify({ ...document, components: { ...components, schemas: kept } });
    const unused = inputNames.filter(
      (name) => name in kept && !text.includes(`"#/components/schemas/${name}"`),
    );
    if (unused.length === 0) break;
    kept = Object.fromEntries(Object.entries(kept).filter(([name]) => !unused.includes(name)));
  }
  return { ...document, components: { ...components, schemas: kept } };
}
