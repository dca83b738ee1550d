import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { Clock, StrataException } from '@strata/platform';
import type { AllowedDomainEntity } from './allowed-domain.entity.js';
import { AllowedDomainsRepository } from './allowed-domains.repository.js';
import { MAX_ALLOWED_DOMAINS, normaliseDomain } from './domain-pattern.js';

export interface AllowedDomainView {
  domain: string;
  createdBy: string;
  createdAt: string;
}

const view = (d: AllowedDomainEntity): AllowedDomainView => ({
  domain: d.domain,
  createdBy: d.createdBy,
  createdAt: d.createdAt.toISOString(),
});

/** The allowed-domains list of a workspace: where `api.fetch` and `api.httpPost` may go. */
@Injectable()
export class AllowedDomainsService {
  constructor(
    private readonly domains: AllowedDomainsRepository,
    private readonly clock: Clock,
  ) {}

  async list(scope: WorkspaceScope): Promise<{ domains: AllowedDomainView[]; limit: number }> {
    return { domains: (await this.domains.list(scope)).map(view), limit: MAX_ALLOWED_DOMAINS };
  }

  async add(scope: WorkspaceScope, by: string, input: string): Promise<AllowedDomainView> {
    const domain = this.checked(input);
    const result = await this.domains.add(scope, domain, by, this.clock.now(), MAX_ALLOWED_DOMAINS);
    if ('exists' in result) throw StrataException.conflict(`Domain '${domain}' is already allowed.`);
    if ('full' in result) {
      throw StrataException.unprocessable(`A workspace allows at most ${MAX_ALLOWED_DOMAINS} domains.`);
    }
    return view(result.added);
  }

  async remove(scope: WorkspaceScope, input: string): Promise<{ success: true; message: string }> {
    const normalised = normaliseDomain(input);
    // A name stored before a rule refused it (an empty label, say) can still be taken off the list.
    const domain = 'domain' in normalised ? normalised.domain : input.trim().toLowerCase();
    if (!(await this.domains.remove(scope, domain))) {
      if ('error' in normalised) this.checked(input);
      throw StrataException.notFound(`Domain '${domain}' is not allowed.`);
    }
    return { success: true, message: `Domain '${domain}' removed.` };
  }

  private checked(input: string): string {
    const normalised = normaliseDomain(input);
    if ('error' in normalised)
      throw StrataException.validation([{ field: 'domain', message: `domain ${normalised.error}` }]);
    return normalised.domain;
  }
}
