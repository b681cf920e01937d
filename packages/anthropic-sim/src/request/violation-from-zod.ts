import type { z } from 'zod';
import type { RequestViolation } from './validate-request';

/** The first zod issue as the API words shape errors: `messages.0.content: Field required`. */
export function violationFromZod(error: z.ZodError): RequestViolation {
  const issue = error.issues[0];
  if (!issue) return { path: '', message: 'Invalid request' };
  const missing = issue.code === 'invalid_type' && issue.input === undefined;
  return { path: issue.path.join('.'), message: missing ? 'Field required' : issue.message };
}
