import { describe, expect, it } from 'vitest';
import { ApprovalPolicySchema, needsApproval } from './approval-policy';

describe('needsApproval', () => {
  it('follows all, none, names and * patterns', () => {
    expect(needsApproval(undefined, 'send_mail')).toBe(false);
    expect(needsApproval({ tools: 'none' }, 'send_mail')).toBe(false);
    expect(needsApproval({ tools: 'all' }, 'get_time')).toBe(true);
    const policy = { tools: ['send_mail', 'github_*', '*_delete', 'a*b*c'] };
    expect(needsApproval(policy, 'send_mail')).toBe(true);
    expect(needsApproval(policy, 'send_mail2')).toBe(false);
    expect(needsApproval(policy, 'github_create_issue')).toBe(true);
    expect(needsApproval(policy, 'gitlab_create_issue')).toBe(false);
    expect(needsApproval(policy, 'files_delete')).toBe(true);
    expect(needsApproval(policy, 'files_deleted')).toBe(false);
    expect(needsApproval(policy, 'axbyc')).toBe(true);
    expect(needsApproval(policy, 'abc')).toBe(true);
    expect(needsApproval(policy, 'acb')).toBe(false);
    expect(needsApproval({ tools: ['ab*ba'] }, 'aba')).toBe(false);
  });

  it('refuses what is no name or pattern, and unknown fields', () => {
    expect(ApprovalPolicySchema.safeParse({ tools: ['has space'] }).success).toBe(false);
    expect(ApprovalPolicySchema.safeParse({ tools: 'some' }).success).toBe(false);
    expect(ApprovalPolicySchema.safeParse({ tools: 'all', expiresAfterSeconds: 0 }).success).toBe(
      false,
    );
    expect(ApprovalPolicySchema.safeParse({ tools: 'all', extra: 1 }).success).toBe(false);
    expect(ApprovalPolicySchema.safeParse({ tools: ['x*'], expiresAfterSeconds: 60 }).success).toBe(
      true,
    );
  });
});
