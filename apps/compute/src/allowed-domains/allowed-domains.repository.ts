import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { WorkspaceScope } from '@strata/db';
import { AllowedDomainEntity } from './allowed-domain.entity.js';

/** compute.allowed_domains within one workspace. */
@Injectable()
export class AllowedDomainsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  list(scope: WorkspaceScope): Promise<AllowedDomainEntity[]> {
    return this.db
      .createQueryBuilder(AllowedDomainEntity, 'd')
      .where('d.workspace_slug = :workspace', { workspace: scope.workspace })
      .orderBy('d.domain', 'ASC')
      .getMany();
  }

  /**
   * Adds a domain unless the workspace has `max` already (checked in the insert's
   * own statement; adds racing each other may pass the cap by their number, which
   * is harmless). Answers whether it was added, was there already, or the cap is reached.
   */
  async add(
    scope: WorkspaceScope,
    domain: string,
    by: string,
    now: Date,
    max: number,
  ): Promise<{ added: AllowedDomainEntity } | { exists: true } | { full: true }> {
    const rows = await this.db.query<{ domain: string }[]>(
      `INSERT INTO compute.allowed_domains (workspace_slug, domain, created_by, created_at)
       SELECT $1, $2, $3, $4
        WHERE (SELECT count(*) FROM compute.allowed_domains WHERE workspace_slug = $1) < $5
       ON CONFLICT (workspace_slug, domain) DO NOTHING RETURNING domain`,
      [scope.workspace, domain, by, now, max],
    );
    if (rows[0]) {
      return {
        added: this.db.manager.create(AllowedDomainEntity, {
          workspaceSlug: scope.workspace,
          domain,
          createdBy: by,
          createdAt: now,
        }),
      };
    }
    const existing = await this.db
      .createQueryBuilder(AllowedDomainEntity, 'd')
      .where('d.workspace_slug = :workspace AND d.domain = :domain', { workspace: scope.workspace, domain })
      .getOne();
    return existing ? { exists: true } : { full: true };
  }

  async remove(scope: WorkspaceScope, domain: string): Promise<boolean> {
    const result = await this.db
      .createQueryBuilder()
      .delete()
      .from(AllowedDomainEntity)
      .where('workspace_slug = :workspace AND domain = :domain', { workspace: scope.workspace, domain })
      .execute();
    return (result.affected ?? 0) > 0;
  }
}
