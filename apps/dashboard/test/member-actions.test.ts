import { describe, expect, it } from 'vitest';
import { grantableRoles, memberActions } from '../src/pages/members/access.ts';

// What the members page offers, by the API's rules (services/accounts: removeMember and updateMember need
// member:manage; only an owner touches an owner; the last owner's refusal comes from the API itself).
describe('what the members page offers', () => {
  const owner = { role: 'owner' as const, manage: true };
  const admin = { role: 'admin' as const, manage: true };
  const member = { role: 'member' as const, manage: false };

  it('an owner changes anyone to any role, removes others and may try to leave', () => {
    expect(memberActions(owner, 'owner', true)).toEqual({ roles: ['owner', 'admin', 'member', 'viewer'], removal: 'leave' });
    expect(memberActions(owner, 'owner', false)).toEqual({ roles: ['owner', 'admin', 'member', 'viewer'], removal: 'remove' });
    expect(memberActions(owner, 'viewer', false).removal).toBe('remove');
  });

  it('an admin never touches an owner nor grants owner, and may leave', () => {
    expect(memberActions(admin, 'owner', false)).toEqual({ roles: [], removal: undefined });
    expect(memberActions(admin, 'admin', false)).toEqual({ roles: ['admin', 'member', 'viewer'], removal: 'remove' });
    expect(memberActions(admin, 'admin', true)).toEqual({ roles: ['admin', 'member', 'viewer'], removal: 'leave' });
    expect(grantableRoles(admin)).toEqual(['admin', 'member', 'viewer']);
  });

  it('members and viewers are offered nothing, not even leaving (the API refuses them: 403)', () => {
    expect(memberActions(member, 'member', true)).toEqual({ roles: [], removal: undefined });
    expect(memberActions({ role: 'viewer', manage: false }, 'viewer', true)).toEqual({ roles: [], removal: undefined });
    expect(grantableRoles(member)).toEqual([]);
  });
});
