import { Resource, segment, type CallOptions } from '../http/resource.js';
import type { Group, GroupMember, Policy } from './types.js';

/** `{auth_url}/workspace/{workspace}/api/v1/groups`: permissions come only through group membership. */
export class Groups extends Resource {
  create(input: { name: string; description?: string }, options?: CallOptions): Promise<Group> {
    return this.call('POST', '/groups', { body: input, signal: options?.signal });
  }

  list(options?: CallOptions): Promise<{ data: Group[] }> {
    return this.read('/groups', undefined, options);
  }

  get(id: string, options?: CallOptions): Promise<Group> {
    return this.read(`/groups/${segment(id)}`, undefined, options);
  }

  update(id: string, input: { name?: string; description?: string }, options?: CallOptions): Promise<Group> {
    return this.call('PATCH', `/groups/${segment(id)}`, { body: input, signal: options?.signal });
  }

  async delete(id: string, options?: CallOptions): Promise<void> {
    await this.call('DELETE', `/groups/${segment(id)}`, { signal: options?.signal });
  }

  /** Grants `actions` on `resource` (or `*`) to the group's members. */
  addPolicy(
    id: string,
    policy: { resource: string; actions: readonly string[]; collections?: readonly string[] | null },
    options?: CallOptions,
  ): Promise<Policy> {
    return this.call('POST', `/groups/${segment(id)}/policies`, { body: policy, signal: options?.signal });
  }

  updatePolicy(
    id: string,
    policyId: string,
    /** Without `collections` the policy keeps its list; null: every collection. */
    policy: { resource?: string; actions?: readonly string[]; collections?: readonly string[] | null },
    options?: CallOptions,
  ): Promise<Policy> {
    return this.call('PUT', `/groups/${segment(id)}/policies/${segment(policyId)}`, {
      body: policy,
      signal: options?.signal,
    });
  }

  async removePolicy(id: string, policyId: string, options?: CallOptions): Promise<void> {
    await this.call('DELETE', `/groups/${segment(id)}/policies/${segment(policyId)}`, { signal: options?.signal });
  }

  /** A user (by `id` or `email`) or a service account (by its `clientId`). */
  addMember(
    id: string,
    member: { type: 'user'; id?: string; email?: string } | { type: 'service_account'; id: string },
    options?: CallOptions,
  ): Promise<GroupMember> {
    return this.call('POST', `/groups/${segment(id)}/members`, { body: member, signal: options?.signal });
  }

  async removeMember(
    id: string,
    type: 'user' | 'service_account',
    memberId: string,
    options?: CallOptions,
  ): Promise<void> {
    await this.call('DELETE', `/groups/${segment(id)}/members/${segment(type)}/${segment(memberId)}`, {
      signal: options?.signal,
    });
  }
}
