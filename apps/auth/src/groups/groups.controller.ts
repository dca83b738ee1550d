import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { RequirePermission, UuidPipe, CallerScope } from '@strata/platform';
import type { WorkspaceScope } from '@strata/db';
import {
  AddMemberRequest,
  CreateGroupRequest,
  PolicyRequest,
  UpdateGroupRequest,
  UpdatePolicyRequest,
} from './dto/group.requests.js';
import { GroupsService, type Group, type Member, type Policy } from './groups.service.js';

/**
 * `{auth_url}/workspace/{workspace}/api/v1/groups`: groups, their policies
 * (`{resource, actions}`) and their members (users and service accounts).
 */
@ApiTags('groups')
@ApiBearerAuth()
@Controller('workspace/:workspace/api/v1/groups')
export class GroupsController {
  constructor(private readonly groups: GroupsService) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('groups', 'create')
  create(@CallerScope() scope: WorkspaceScope, @Body() body: CreateGroupRequest): Promise<Group> {
    return this.groups.create(scope, body);
  }

  @Get()
  @RequirePermission('groups', 'list')
  async list(@CallerScope() scope: WorkspaceScope): Promise<{ data: Group[] }> {
    return { data: await this.groups.list(scope) };
  }

  @Get(':groupId')
  @RequirePermission('groups', 'retrieve')
  get(@CallerScope() scope: WorkspaceScope, @Param('groupId', UuidPipe) groupId: string): Promise<Group> {
    return this.groups.get(scope, groupId);
  }

  @Patch(':groupId')
  @RequirePermission('groups', 'update')
  update(
    @CallerScope() scope: WorkspaceScope,
    @Param('groupId', UuidPipe) groupId: string,
    @Body() body: UpdateGroupRequest,
  ): Promise<Group> {
    return this.groups.update(scope, groupId, body);
  }

  @Delete(':groupId')
  @HttpCode(204)
  @RequirePermission('groups', 'delete')
  async delete(@CallerScope() scope: WorkspaceScope, @Param('groupId', UuidPipe) groupId: string): Promise<void> {
    await this.groups.delete(scope, groupId);
  }

  @Post(':groupId/policies')
  @HttpCode(201)
  @RequirePermission('groups', 'update')
  addPolicy(
    @CallerScope() scope: WorkspaceScope,
    @Param('groupId', UuidPipe) groupId: string,
    @Body() body: PolicyRequest,
  ): Promise<Policy> {
    return this.groups.addPolicy(scope, groupId, body);
  }

  @Put(':groupId/policies/:policyId')
  @RequirePermission('groups', 'update')
  updatePolicy(
    @CallerScope() scope: WorkspaceScope,
    @Param('groupId', UuidPipe) groupId: string,
    @Param('policyId', UuidPipe) policyId: string,
    @Body() body: UpdatePolicyRequest,
  ): Promise<Policy> {
    return this.groups.updatePolicy(scope, groupId, policyId, body);
  }

  @Delete(':groupId/policies/:policyId')
  @HttpCode(204)
  @RequirePermission('groups', 'update')
  async deletePolicy(
    @CallerScope() scope: WorkspaceScope,
    @Param('groupId', UuidPipe) groupId: string,
    @Param('policyId', UuidPipe) policyId: string,
  ): Promise<void> {
    await this.groups.deletePolicy(scope, groupId, policyId);
  }

  @Post(':groupId/members')
  @HttpCode(201)
  @RequirePermission('groups', 'update')
  addMember(
    @CallerScope() scope: WorkspaceScope,
    @Param('groupId', UuidPipe) groupId: string,
    @Body() body: AddMemberRequest,
  ): Promise<Member> {
    return this.groups.addMember(scope, groupId, body);
  }

  @Delete(':groupId/members/:type/:memberId')
  @HttpCode(204)
  @RequirePermission('groups', 'update')
  async removeMember(
    @CallerScope() scope: WorkspaceScope,
    @Param('groupId', UuidPipe) groupId: string,
    @Param('type') type: string,
    @Param('memberId') memberId: string,
  ): Promise<void> {
    await this.groups.removeMember(scope, groupId, type, memberId);
  }
}
