import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { RequirePermission, UuidPipe } from '@strata/platform';
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
  create(@Param('workspace') workspace: string, @Body() body: CreateGroupRequest): Promise<Group> {
    return this.groups.create(workspace, body);
  }

  @Get()
  @RequirePermission('groups', 'list')
  async list(@Param('workspace') workspace: string): Promise<{ data: Group[] }> {
    return { data: await this.groups.list(workspace) };
  }

  @Get(':groupId')
  @RequirePermission('groups', 'retrieve')
  get(@Param('workspace') workspace: string, @Param('groupId', UuidPipe) groupId: string): Promise<Group> {
    return this.groups.get(workspace, groupId);
  }

  @Patch(':groupId')
  @RequirePermission('groups', 'update')
  update(
    @Param('workspace') workspace: string,
    @Param('groupId', UuidPipe) groupId: string,
    @Body() body: UpdateGroupRequest,
  ): Promise<Group> {
    return this.groups.update(workspace, groupId, body);
  }

  @Delete(':groupId')
  @HttpCode(204)
  @RequirePermission('groups', 'delete')
  async delete(@Param('workspace') workspace: string, @Param('groupId', UuidPipe) groupId: string): Promise<void> {
    await this.groups.delete(workspace, groupId);
  }

  @Post(':groupId/policies')
  @HttpCode(201)
  @RequirePermission('groups', 'update')
  addPolicy(
    @Param('workspace') workspace: string,
    @Param('groupId', UuidPipe) groupId: string,
    @Body() body: PolicyRequest,
  ): Promise<Policy> {
    return this.groups.addPolicy(workspace, groupId, body.resource, body.actions);
  }

  @Put(':groupId/policies/:policyId')
  @RequirePermission('groups', 'update')
  updatePolicy(
    @Param('workspace') workspace: string,
    @Param('groupId', UuidPipe) groupId: string,
    @Param('policyId', UuidPipe) policyId: string,
    @Body() body: UpdatePolicyRequest,
  ): Promise<Policy> {
    return this.groups.updatePolicy(workspace, groupId, policyId, body.actions);
  }

  @Delete(':groupId/policies/:policyId')
  @HttpCode(204)
  @RequirePermission('groups', 'update')
  async deletePolicy(
    @Param('workspace') workspace: string,
    @Param('groupId', UuidPipe) groupId: string,
    @Param('policyId', UuidPipe) policyId: string,
  ): Promise<void> {
    await this.groups.deletePolicy(workspace, groupId, policyId);
  }

  @Post(':groupId/members')
  @HttpCode(201)
  @RequirePermission('groups', 'update')
  addMember(
    @Param('workspace') workspace: string,
    @Param('groupId', UuidPipe) groupId: string,
    @Body() body: AddMemberRequest,
  ): Promise<Member> {
    return this.groups.addMember(workspace, groupId, body);
  }

  @Delete(':groupId/members/:type/:memberId')
  @HttpCode(204)
  @RequirePermission('groups', 'update')
  async removeMember(
    @Param('workspace') workspace: string,
    @Param('groupId', UuidPipe) groupId: string,
    @Param('type') type: string,
    @Param('memberId') memberId: string,
  ): Promise<void> {
    await this.groups.removeMember(workspace, groupId, type, memberId);
  }
}
