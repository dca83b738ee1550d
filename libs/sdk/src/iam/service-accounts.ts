import { Resource, segment, type CallOptions } from '../http/resource.js';
import type { ServiceAccount, ServiceAccountInput, ServiceAccountWithSecret } from './types.js';

/** `{auth_url}/workspace/{workspace}/api/v1/service-accounts`. */
export class ServiceAccounts extends Resource {
  /** The answer holds `clientSecret`, once. */
  create(input: ServiceAccountInput, options?: CallOptions): Promise<ServiceAccountWithSecret> {
    return this.call('POST', '/service-accounts', { body: input, signal: options?.signal });
  }

  list(
    query: { page?: number; limit?: number } = {},
    options?: CallOptions,
  ): Promise<{ data: ServiceAccount[]; meta: { total: number; page: number; limit: number } }> {
    return this.read('/service-accounts', { ...query }, options);
  }

  get(id: number, options?: CallOptions): Promise<ServiceAccount> {
    return this.read(`/service-accounts/${segment(id)}`, undefined, options);
  }

  rename(id: number, name: string, options?: CallOptions): Promise<ServiceAccount> {
    return this.call('PUT', `/service-accounts/${segment(id)}/name`, { body: { name }, signal: options?.signal });
  }

  describe(id: number, description: string, options?: CallOptions): Promise<ServiceAccount> {
    return this.call('PUT', `/service-accounts/${segment(id)}/description`, {
      body: { description },
      signal: options?.signal,
    });
  }

  /** A new secret; the old one stops working at once. */
  rotate(id: number, options?: CallOptions): Promise<ServiceAccountWithSecret> {
    return this.call('POST', `/service-accounts/${segment(id)}/rotate`, { signal: options?.signal });
  }

  /** Disables the account without deleting it. */
  revoke(id: number, options?: CallOptions): Promise<ServiceAccount> {
    return this.call('POST', `/service-accounts/${segment(id)}/revoke`, { signal: options?.signal });
  }

  async delete(id: number, options?: CallOptions): Promise<void> {
    await this.call('DELETE', `/service-accounts/${segment(id)}`, { signal: options?.signal });
  }
}
