import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/access.decorators.js';
import { Readiness } from './readiness.js';

/** `/healthz`: the process is alive. `/readyz`: its database and NATS answer. */
@ApiExcludeController()
@Public()
@Controller()
export class HealthController {
  constructor(private readonly readiness: Readiness) {}

  @Get('healthz')
  @HttpCode(200)
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  async readyz(
    @Res({ passthrough: true }) res: Response,
  ): Promise<{ status: 'ok' | 'unavailable'; checks: Record<string, string> }> {
    const checks = await this.readiness.run();
    const ok = Object.values(checks).every((v) => v === 'ok');
    res.status(ok ? 200 : 503);
    return { status: ok ? 'ok' : 'unavailable', checks };
  }
}
