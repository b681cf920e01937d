import type Anthropic from '@anthropic-ai/sdk';
import { InvalidInputError } from '@chunklog/chunk-core';
import { z } from 'zod';

/** What a tool learns about the call it serves. */
export interface ToolContext {
  tabId: string;
  turnId: string;
  callId: string;
  /** Aborted when the turn is cancelled or the worker loses the tab. */
  signal: AbortSignal;
}

/** A tool the model may call: a zod input schema, a description, and the code that runs it. */
export interface ToolDefinition<Input = unknown> {
  /** Matches ^[a-zA-Z0-9_-]{1,64}$ (an Anthropic API rule). */
  name: string;
  description: string;
  /** Validates the model's arguments; zod 4 turns it into the JSON schema the model sees. */
  inputSchema: z.ZodType<Input>;
  /** Overrides the schema derived from inputSchema (remote tools bring their own). */
  jsonSchema?: Record<string, unknown>;
  run(input: Input, context: ToolContext): Promise<unknown>;
}

/** The result a tool call becomes: what goes into the tool_result chunk. */
export interface ToolOutcome {
  result: unknown;
  isError: boolean;
}

/** A set of tools by name, able to describe them to the model and run them. */
export interface ToolSet {
  names(): string[];
  has(name: string): boolean;
  /** The tool definitions for the request, in registration order (stable bytes for the cache). */
  describe(only?: readonly string[]): Anthropic.Tool[];
  /** Runs a call; never throws: failures become an error outcome the model can read. */
  run(name: string, input: unknown, context: ToolContext): Promise<ToolOutcome>;
}

/** A tool set that tools can be added to and removed from. */
export interface ToolRegistry extends ToolSet {
  add(tool: ToolDefinition<unknown>): void;
  remove(name: string): void;
}

const ToolNameSchema = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/);

/** Declares a tool with its input type inferred from the schema. */
export function defineTool<Schema extends z.ZodType>(tool: {
  name: string;
  description: string;
  inputSchema: Schema;
  jsonSchema?: Record<string, unknown>;
  run(input: z.infer<Schema>, context: ToolContext): Promise<unknown>;
}): ToolDefinition<z.infer<Schema>> {
  ToolNameSchema.parse(tool.name);
  return tool as ToolDefinition<z.infer<Schema>>;
}

function toInputSchema(tool: ToolDefinition<unknown>): Anthropic.Tool.InputSchema {
  const schema = tool.jsonSchema ?? z.toJSONSchema(tool.inputSchema, { io: 'input' });
  // The API wants a bare object schema; the $schema marker is noise that costs tokens.
  const { $schema: _marker, ...rest } = schema as Record<string, unknown>;
  return { ...rest, type: 'object' } as Anthropic.Tool.InputSchema;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Builds a registry; later tools with the same name replace earlier ones. */
export function createToolRegistry(tools: readonly ToolDefinition<unknown>[] = []): ToolRegistry {
  const byName = new Map<string, ToolDefinition<unknown>>();
  // Descriptions are cached per tool so every request carries byte-identical tool JSON.
  const described = new Map<string, Anthropic.Tool>();

  const registry: ToolRegistry = {
    names: () => [...byName.keys()],
    has: (name) => byName.has(name),
    describe(only) {
      const names = only ? [...byName.keys()].filter((name) => only.includes(name)) : byName.keys();
      const result: Anthropic.Tool[] = [];
      for (const name of names) {
        const tool = byName.get(name);
        if (!tool) continue;
        let description = described.get(name);
        if (!description) {
          description = { name, description: tool.description, input_schema: toInputSchema(tool) };
          described.set(name, description);
        }
        result.push(description);
      }
      return result;
    },
    async run(name, input, context) {
      const tool = byName.get(name);
      if (!tool) return { result: `Unknown tool: ${name}`, isError: true };
      const parsed = tool.inputSchema.safeParse(input);
      if (!parsed.success) {
        return {
          result: `Invalid input for ${name}: ${z.prettifyError(parsed.error)}`,
          isError: true,
        };
      }
      try {
        return { result: await tool.run(parsed.data as never, context), isError: false };
      } catch (error) {
        return { result: errorMessage(error), isError: true };
      }
    },
    add(tool) {
      if (!ToolNameSchema.safeParse(tool.name).success) {
        throw new InvalidInputError(`Invalid tool name: ${tool.name}`);
      }
      byName.set(tool.name, tool);
      described.delete(tool.name);
    },
    remove(name) {
      byName.delete(name);
      described.delete(name);
    },
  };
  for (const tool of tools) registry.add(tool);
  return registry;
}
