import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal, UserOnly, WorkspaceLess, type Principal } from '@strata/platform';
import { CreateWorkspaceRequest } from './dto/create-workspace.request.js';
import { WorkspacesService, type Workspace } from './workspaces.service.js';

/** `{base_url}/workspace/api/v1/workspaces`: workspaces of the calling user. */
@ApiTags('workspaces')
@ApiBearerAuth()
@Controller('workspace/api/v1/workspaces')
@Authenticated()
@UserOnly()
@WorkspaceLess()
export class WorkspacesController {
  constructor(private readonly workspaces: WorkspacesService) {}

  @Post()
  @HttpCode(201)
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateWorkspaceRequest): Promise<Workspace> {
    return this.workspaces.create(principal.id, body);
  }

  @Get()
  async list(@CurrentPrincipal() principal: Principal): Promise<{ data: Workspace[] }> {
    return { data: await this.workspaces.listForUser(principal.id) };
  }

  @Get(':slug')
  get(@CurrentPrincipal() principal: Principal, @Param('slug') slug: string): Promise<Workspace> {
    return this.workspaces.getForUser(principal.id, slug);
  }
}
