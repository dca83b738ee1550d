import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorCode, isWorkspaceSlug, type WorkspacePlan } from '@strata/contracts';
import { issueWorkspaceScope, type WorkspaceScope } from '@strata/db';
import {
  Authenticated,
  CurrentPrincipal,
  StrataException,
  UserOnly,
  WorkspaceLess,
  type Principal,
} from '@strata/platform';
import { UsersRepository } from '../users/users.repository.js';
import { WorkspacesService } from '../workspaces/workspaces.service.js';
import { AssignPlanRequest } from './dto/plan.requests.js';
import { PlansService } from './plans.service.js';
import { WorkspaceUsageService, type WorkspaceUsage } from './workspace-usage.service.js';

/**
 * `{base_url}/workspace/api/v1/workspaces/{slug}/plan` and `/usage`: a
 * workspace's plan and usage, read by its members (any user in one of its
 * groups) and platform administrators; the plan is changed by platform
 * administrators only (docs/plans.md).
 */
@ApiTags('plans')
@ApiBearerAuth()
@Controller('workspace/api/v1/workspaces')
@Authenticated()
@UserOnly()
@WorkspaceLess()
export class WorkspacePlanController {
  constructor(
    private readonly plans: PlansService,
    private readonly usage: WorkspaceUsageService,
    private readonly workspaces: WorkspacesService,
    private readonly users: UsersRepository,
  ) {}

  @Get(':slug/usage')
  @ApiOperation({ summary: "The workspace's plan, each resource's limit and usage, and its features" })
  async usageOf(@CurrentPrincipal() principal: Principal, @Param('slug') slug: string): Promise<WorkspaceUsage> {
    return this.usage.usageOf(await this.readable(principal, slug));
  }

  @Get(':slug/plan')
  @ApiOperation({ summary: "The workspace's plan" })
  async planOf(@CurrentPrincipal() principal: Principal, @Param('slug') slug: string): Promise<WorkspacePlan> {
    const scope = await this.readable(principal, slug);
    const plan = await this.plans.planOf(scope);
    if (!plan) throw notFound(slug);
    return plan;
  }

  @Put(':slug/plan')
  @ApiOperation({ summary: 'Give the workspace a plan (platform administrators)' })
  async assign(
    @CurrentPrincipal() principal: Principal,
    @Param('slug') slug: string,
    @Body() body: AssignPlanRequest,
  ): Promise<WorkspacePlan> {
    await this.plans.requireAdmin(principal.id);
    if (!isWorkspaceSlug(slug)) throw notFound(slug);
    // A platform administrator acts on any workspace.
    return this.plans.assign(issueWorkspaceScope(slug), body.plan);
  }

  /** The workspace, when the caller is one of its members or a platform administrator (404 otherwise). */
  private async readable(principal: Principal, slug: string): Promise<WorkspaceScope> {
    if (!isWorkspaceSlug(slug)) throw notFound(slug);
    const admin = (await this.users.findById(principal.id))?.is_platform_admin === true;
    if (!admin && !(await this.workspaces.isMember(principal.id, slug))) throw notFound(slug);
    // Checked above: the caller belongs to the workspace, or administers the platform.
    return issueWorkspaceScope(slug);
  }
}

const notFound = (slug: string): StrataException =>
  StrataException.notFound(`Workspace '${slug}' not found`, ErrorCode.NOT_FOUND);
