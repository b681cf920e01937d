import { z } from 'zod';
import { isSecretScopeVariable } from './mcp-secret-scope';

/**
 * An MCP server's name: the prefix of its tools' names (`<server>_<tool>`). No underscore, so
 * the prefix of a tool name is always exactly one server's name.
 */
export const McpServerNameSchema = z
  .string()
  .regex(/^[a-zA-Z0-9-]{1,32}$/, 'letters, digits and "-", at most 32 (no "_")');

/** Environment variables a secret reference may name: only those meant for MCP servers. */
export const MCP_SECRET_PREFIX = 'MCP_SECRET_';

/**
 * A value the worker reads from its own environment when it calls the server, so the secret
 * itself is never in a tab's config, the log or the worker's log lines.
 */
export const SecretReferenceSchema = z
  .object({
    secret: z
      .string()
      .regex(
        /^MCP_SECRET_[A-Z0-9_]{1,64}$/,
        `an environment variable of the worker whose name begins ${MCP_SECRET_PREFIX}`,
      )
      .refine((name) => !isSecretScopeVariable(name), {
        error: "a name ending _TENANTS or _ORIGINS is a secret's scope, not a secret",
      }),
  })
  .strict();
export type SecretReference = z.infer<typeof SecretReferenceSchema>;

const HeaderNameSchema = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'a header name');

/** A server reached over Streamable HTTP; header values are secret references only. */
export const McpHttpServerSchema = z
  .object({
    name: McpServerNameSchema,
    transport: z.literal('http', {
      error:
        'a tab may name only "http" MCP servers: a "stdio" server runs a command on the worker, so only the deployment (MCP_SERVERS) may name one',
    }),
    url: z.url({ protocol: /^https?$/, error: 'an http or https URL' }).max(2000),
    headers: z.record(HeaderNameSchema, SecretReferenceSchema).optional(),
    /** How long one tool call may take (default 60 s; progress notifications restart it). */
    callTimeoutMs: z.number().int().min(100).max(600_000).optional(),
  })
  .strict();
export type McpHttpServer = z.infer<typeof McpHttpServerSchema>;

/** A server the worker starts as a child process and talks to over stdin/stdout. */
export const McpStdioServerSchema = z
  .object({
    name: McpServerNameSchema,
    transport: z.literal('stdio'),
    command: z.string().min(1).max(1000),
    args: z.array(z.string().max(10_000)).max(100).optional(),
    cwd: z.string().min(1).max(1000).optional(),
    /** The child's environment besides PATH, HOME and the like: secret references only. */
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,99}$/), SecretReferenceSchema)
      .optional(),
    callTimeoutMs: z.number().int().min(100).max(600_000).optional(),
  })
  .strict();
export type McpStdioServer = z.infer<typeof McpStdioServerSchema>;

export type McpServer = McpHttpServer | McpStdioServer;

const uniqueNames = (servers: readonly { name: string }[]) =>
  new Set(servers.map((server) => server.name)).size === servers.length;
const uniqueNamesError = { error: 'MCP server names must be unique' };

/** The MCP servers a tab names: Streamable HTTP only (a tab must not run commands). */
export const TabMcpServersSchema = z
  .array(McpHttpServerSchema)
  .max(8)
  .refine(uniqueNames, uniqueNamesError);

/** The MCP servers the deployment names (the worker's MCP_SERVERS): both transports. */
export const DeploymentMcpServersSchema = z
  .array(z.discriminatedUnion('transport', [McpHttpServerSchema, McpStdioServerSchema]))
  .max(32)
  .refine(uniqueNames, uniqueNamesError);
