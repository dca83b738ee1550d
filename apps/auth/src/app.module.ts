import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PlatformModule, TransactionsProvider, type Clock } from '@strata/platform';
import { serviceDataSourceOptions, Transactions } from '@strata/db';
import { AuthConfig } from './auth.config.js';
import { IAM_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { UsersService } from './users/users.service.js';
import { WorkspacesService } from './workspaces/workspaces.service.js';
import { WorkspacesController } from './workspaces/workspaces.controller.js';
import { WorkspaceFactsController } from './workspaces/workspace-facts.controller.js';
import { ServiceAccountsService } from './service-accounts/service-accounts.service.js';
import { ServiceAccountsController } from './service-accounts/service-accounts.controller.js';
import { GroupsService } from './groups/groups.service.js';
import { GroupsController } from './groups/groups.controller.js';
import { PublishableKeysService } from './publishable-keys/publishable-keys.service.js';
import { PublishableKeysController } from './publishable-keys/publishable-keys.controller.js';
import { PermissionsService } from './permissions/permissions.service.js';
import { MemberPermissionsController } from './permissions/member-permissions.controller.js';
import { PermissionsController } from './permissions/permissions.controller.js';
import { LocalPermissionResolver } from './permissions/local-permission.resolver.js';
import { SigningKeysService } from './oidc/signing-keys.service.js';
import { OidcService } from './oidc/oidc.service.js';
import { InteractionController } from './oidc/interaction.controller.js';
import { DatabaseReadiness } from '@strata/platform';
import { UsersRepository } from './users/users.repository.js';
import { FunctionPrincipalsRepository } from './function-principals/function-principals.repository.js';
import { FunctionPrincipalsService } from './function-principals/function-principals.service.js';
import { WorkspacesRepository } from './workspaces/workspaces.repository.js';
import { ServiceAccountsRepository } from './service-accounts/service-accounts.repository.js';
import { GroupsRepository } from './groups/groups.repository.js';
import { PublishableKeysRepository } from './publishable-keys/publishable-keys.repository.js';
import { LoginWorkspacesRepository } from './oidc/login-workspaces.repository.js';
import { OidcPayloadsRepository } from './oidc/oidc-payloads.repository.js';
import { SignInMetrics } from './sign-in-throttle/sign-in-metrics.js';
import { SignInFailuresRepository } from './sign-in-throttle/sign-in-failures.repository.js';
import { SignInThrottle } from './sign-in-throttle/sign-in-throttle.service.js';
import { OidcRetention } from './oidc/oidc-retention.js';
import { OidcRetentionRepository } from './oidc/oidc-retention.repository.js';
import { PlansRepository } from './plans/plans.repository.js';
import { PlansService } from './plans/plans.service.js';
import { PlanNotices } from './plans/plan-notices.js';
import { PlansDirectory } from './plans/plans-directory.js';
import { WorkspaceUsageService } from './plans/workspace-usage.service.js';
import { PlansController } from './plans/plans.controller.js';
import { WorkspacePlanController } from './plans/workspace-plan.controller.js';

/** The identity model: what the permission resolver and the controllers share. */
@Module({
  providers: [
    TransactionsProvider,
    SignInMetrics,
    UsersRepository,
    FunctionPrincipalsRepository,
    FunctionPrincipalsService,
    WorkspacesRepository,
    ServiceAccountsRepository,
    GroupsRepository,
    PublishableKeysRepository,
    PlansRepository,
    PlanNotices,
    PlansService,
    WorkspaceUsageService,
    UsersService,
    WorkspacesService,
    ServiceAccountsService,
    GroupsService,
    PublishableKeysService,
    PermissionsService,
    LocalPermissionResolver,
  ],
  exports: [
    Transactions,
    UsersRepository,
    PlansService,
    WorkspaceUsageService,
    SignInMetrics,
    UsersService,
    WorkspacesService,
    ServiceAccountsService,
    GroupsService,
    PublishableKeysService,
    PermissionsService,
    LocalPermissionResolver,
  ],
})
class IdentityModule {}

@Module({})
export class AuthAppModule {
  /** `clock`: the service's clock (rate-limit windows); the system clock unless given. */
  static forRoot(config: AuthConfig, clock?: Clock): DynamicModule {
    return {
      module: AuthAppModule,
      imports: [
        TypeOrmModule.forRoot(
          serviceDataSourceOptions({
            url: config.DATABASE_URL,
            schema: IAM_SCHEMA,
            entities: [],
            migrations: MIGRATIONS,
          }),
        ),
        PlatformModule.forRoot({
          config,
          clock,
          permissionResolver: LocalPermissionResolver,
          imports: [IdentityModule],
        }),
        IdentityModule,
      ],
      controllers: [
        WorkspacesController,
        WorkspaceFactsController,
        PlansController,
        WorkspacePlanController,
        ServiceAccountsController,
        GroupsController,
        PublishableKeysController,
        PermissionsController,
        MemberPermissionsController,
        InteractionController,
      ],
      providers: [
        LoginWorkspacesRepository,
        OidcPayloadsRepository,
        SignInFailuresRepository,
        SignInThrottle,
        OidcRetentionRepository,
        OidcRetention,
        PlansDirectory,
        SigningKeysService,
        OidcService,
        DatabaseReadiness,
      ],
    };
  }
}
