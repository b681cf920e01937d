import { z } from 'zod';

/**
 * A tool name, or a pattern with `*` for any run of characters (`github_*`: every tool of the
 * MCP server `github`).
 */
const ToolPatternSchema = z
  .string()
  .regex(/^[a-zA-Z0-9_*-]{1,64}$/, 'a tool name, or a pattern of name characters and *');

/**
 * Which tool calls wait for a person's decision: `all`, `none`, or the calls whose tool matches
 * one of `tools`; built-in, remote and MCP tools alike. Undecided calls are denied with reason
 * `expired` after `expiresAfterSeconds` (absent: they wait for as long as it takes).
 */
export const ApprovalPolicySchema = z
  .object({
    tools: z.union([z.literal('all'), z.literal('none'), z.array(ToolPatternSchema).max(128)]),
    expiresAfterSeconds: z
      .number()
      .int()
      .min(1)
      .max(365 * 86_400)
      .optional(),
  })
  .strict();
export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;

/** Whether a call of `tool` waits for a decision under `policy` (absent: none does). */
export function needsApproval(policy: ApprovalPolicy | undefined, tool: string): boolean {
  if (policy === undefined || policy.tools === 'none') return false;
  if (policy.tools === 'all') return true;
  return policy.tools.some((pattern) => matchesPattern(pattern, tool));
}

function matchesPattern(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  const parts = pattern.split('*');
  const first = parts[0] ?? '';
  const last = parts[parts.length - 1] ?? '';
  if (!name.startsWith(first) || name.length < first.length + last.length) return false;
  let at = first.length;
  for (const part of parts.slice(1, -1)) {
    const found = name.indexOf(part, at);
    if (found === -1) return false;
    at = found + part.length;
  }
  return name.endsWith(last) && at <= name.length - last.length;
}
