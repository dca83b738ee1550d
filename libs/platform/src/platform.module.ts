import { Module, type DynamicModule, type OnModuleInit, type Type, type ModuleMetadata } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { Clock, systemClock } from './clock/clock.js';
import { ServiceConfig } from './config/service-config.js';
import { AccessGuard, BearerAuthorizer } from './auth/access.guard.js';
import { JwtStrategy } from './auth/jwt.strategy.js';
import { HttpPermissionResolver, PermissionResolver } from './auth/permission-resolver.js';
import { PrincipalNames } from './auth/principal-names.js';
import { RouteAccessCheck } from './auth/route-access.check.js';
import { PathParamsGuard } from './http/path-params.guard.js';
import { HealthController } from './health/health.controller.js';
import { Readiness } from './health/readiness.js';
import { NatsConnectionHolder } from './nats/nats.provider.js';
import { NatsKvRateLimitStore, RateLimitStore } from './rate-limit/rate-limit.store.js';
import { RateLimitGuard } from './rate-limit/rate-limit.guard.js';
import { WorkspacePlans } from './plans/workspace-plans.js';

export interface PlatformOptions<C extends ServiceConfig> {
  readonly config: C;
  /** How permissions are resolved; the auth service resolves locally, the others over HTTP. */
  readonly permissionResolver?: Type<PermissionResolver>;
  /** Modules the resolver depends on. */
  readonly imports?: ModuleMetadata['imports'];
  /** The service's clock (`Clock`, injectable everywhere in the service); the system clock unless given. */
  readonly clock?: Clock;
}

@Module({})
class NatsReadiness implements OnModuleInit {
  constructor(
    private readonly readiness: Readiness,
    private readonly nats: NatsConnectionHolder,
  ) {}

  onModuleInit(): void {
    this.readiness.register('nats', async () => {
      await (await this.nats.get()).flush();
    });
  }
}

/**
 * What every service gets: its validated config, its clock, the access guard
 * (JWT, workspace, permission), rate limits, health endpoints, a NATS connection.
 */
@Module({})
export class PlatformModule {
  static forRoot<C extends ServiceConfig>(options: PlatformOptions<C>): DynamicModule {
    const configClass = options.config.constructor as Type<C>;
    return {
      module: PlatformModule,
      global: true,
      imports: [DiscoveryModule, PassportModule, ...(options.imports ?? [])],
      controllers: [HealthController],
      providers: [
        { provide: ServiceConfig, useValue: options.config },
        { provide: Clock, useValue: options.clock ?? systemClock },
        ...(configClass === ServiceConfig ? [] : [{ provide: configClass, useValue: options.config }]),
        NatsConnectionHolder,
        NatsReadiness,
        Readiness,
        WorkspacePlans,
        JwtStrategy,
        RouteAccessCheck,
        BearerAuthorizer,
        { provide: PermissionResolver, useClass: options.permissionResolver ?? HttpPermissionResolver },
        PrincipalNames,
        { provide: RateLimitStore, useClass: NatsKvRateLimitStore },
        // Guards run in this order: parameters checked before any is passed on.
        { provide: APP_GUARD, useClass: PathParamsGuard },
        { provide: APP_GUARD, useClass: AccessGuard },
        { provide: APP_GUARD, useClass: RateLimitGuard },
      ],
      exports: [
        ServiceConfig,
        Clock,
        ...(configClass === ServiceConfig ? [] : [configClass]),
        NatsConnectionHolder,
        Readiness,
        // Each workspace's plan: what a create checks its count against (docs/plans.md).
        WorkspacePlans,
        // Services that start work without a request (compute's triggers) count it in the same budgets.
        RateLimitStore,
        // Handlers that authenticate by themselves (endpoint triggers) check bearer tokens as the guard does.
        BearerAuthorizer,
        // Work done on a principal's behalf without a request (compute's api.invokeTrigger) checks its permissions.
        PermissionResolver,
        // Who acted, by name, for what a request writes (the data service's changelog).
        PrincipalNames,
      ],
    };
  }
}
