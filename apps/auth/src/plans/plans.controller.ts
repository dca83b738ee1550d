import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Plan } from '@strata/contracts';
import { Authenticated, CurrentPrincipal, UserOnly, WorkspaceLess, type Principal } from '@strata/platform';
import { CreatePlanRequest, UpdatePlanRequest } from './dto/plan.requests.js';
import { PlansService } from './plans.service.js';

/** `{base_url}/workspace/api/v1/plans`: the platform's plans, managed by platform administrators (docs/plans.md). */
@ApiTags('plans')
@ApiBearerAuth()
@Controller('workspace/api/v1/plans')
@Authenticated()
@UserOnly()
@WorkspaceLess()
export class PlansController {
  constructor(private readonly plans: PlansService) {}

  @Get()
  @ApiOperation({ summary: 'Every plan (platform administrators)' })
  async list(@CurrentPrincipal() principal: Principal): Promise<{ data: Plan[] }> {
    await this.plans.requireAdmin(principal.id);
    return { data: await this.plans.list() };
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a plan (platform administrators)' })
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreatePlanRequest): Promise<Plan> {
    await this.plans.requireAdmin(principal.id);
    return this.plans.create(body);
  }

  @Get(':name')
  async get(@CurrentPrincipal() principal: Principal, @Param('name') name: string): Promise<Plan> {
    await this.plans.requireAdmin(principal.id);
    return this.plans.get(name);
  }

  @Put(':name')
  @ApiOperation({ summary: "Change a plan's description, limits or features (the fields given)" })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('name') name: string,
    @Body() body: UpdatePlanRequest,
  ): Promise<Plan> {
    await this.plans.requireAdmin(principal.id);
    return this.plans.update(name, body);
  }

  @Delete(':name')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a plan no workspace has' })
  async delete(@CurrentPrincipal() principal: Principal, @Param('name') name: string): Promise<void> {
    await this.plans.requireAdmin(principal.id);
    await this.plans.delete(name);
  }
}
