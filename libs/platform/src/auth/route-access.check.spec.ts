import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Module, type Type } from '@nestjs/common';
import { DiscoveryModule, NestFactory } from '@nestjs/core';
import { Authenticated, Public, RequirePermission, WorkspaceLess } from './access.decorators.js';
import { RouteAccessCheck } from './route-access.check.js';

@Controller('data/workspace/:workspace/api/v1/things')
class ScopedController {
  @Get()
  @RequirePermission('records', 'list')
  list(): string {
    return 'ok';
  }
}

@Controller(['workspace/:workspace/api/v1/a', 'api/v1/b'])
class HalfScopedController {
  @Get()
  @RequirePermission('records', 'list')
  list(): string {
    return 'ok';
  }
}

@Controller('api/v1/things')
class UnscopedController {
  @Get()
  @Authenticated()
  list(): string {
    return 'ok';
  }
}

@Controller('api/v1/workspaces')
@Authenticated()
@WorkspaceLess()
class WorkspaceLessController {
  @Get()
  list(): string {
    return 'ok';
  }
}

@Controller('health')
class PublicController {
  @Get()
  @Public()
  get(): string {
    return 'ok';
  }
}

@Controller('data/workspace/:workspace/api/v1/open')
class UndeclaredController {
  @Get()
  get(): string {
    return 'ok';
  }
}

async function boot(controller: Type): Promise<string | undefined> {
  @Module({ imports: [DiscoveryModule], controllers: [controller], providers: [RouteAccessCheck] })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
  try {
    await app.init();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await app.close().catch(() => undefined);
  }
}

describe('RouteAccessCheck', () => {
  it('boots with routes that name their workspace, are public, or are marked workspace-less', async () => {
    expect(await boot(ScopedController)).toBeUndefined();
    expect(await boot(WorkspaceLessController)).toBeUndefined();
    expect(await boot(PublicController)).toBeUndefined();
  });

  it('refuses a non-public route without a :workspace parameter', async () => {
    expect(await boot(UnscopedController)).toMatch(/UnscopedController\.list has no :workspace parameter/);
    expect(await boot(HalfScopedController)).toMatch(/api\/v1\/b/);
  });

  it('refuses a route without an access rule', async () => {
    expect(await boot(UndeclaredController)).toMatch(/UndeclaredController\.get declares no/);
  });
});
