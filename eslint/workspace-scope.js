// Lint rules that keep tenant isolation structural (docs/architecture.md, "Workspace scope"):
//   - strata/data-access: only repositories (and migrations, module wiring and the listed system
//     files) import TypeORM, so services cannot run SQL except through repository methods that
//     take a WorkspaceScope;
//   - strata/scope-issuers: only the access guard and the listed trusted sources issue a
//     WorkspaceScope, and nothing casts a value to one.
import path from 'node:path';

const ROOT = path.dirname(import.meta.dirname);

/** Files, other than repositories and migrations, that may use TypeORM, each with its reason. */
const DATA_ACCESS = {
  'apps/data/src/app.module.ts': 'module wiring: the data source',
  'apps/auth/src/app.module.ts': 'module wiring: the data source',
  'apps/webhooks/src/app.module.ts': 'module wiring: the data source',
  'apps/compute/src/app.module.ts': 'module wiring: the data source',
  'apps/inbound/src/app.module.ts': 'module wiring: the data source',
  'apps/storage/src/app.module.ts': 'module wiring: the data source',
  'apps/orchestration/src/app.module.ts': 'module wiring: the data source',
  'apps/compute/src/worker/worker.module.ts': 'module wiring: the data source of a sandbox worker',
  'apps/compute/src/compute-data-source.ts': 'the data source options of the API, the workers and the migrations',
  'apps/data/src/records/side-writes.ts': 'builds the statement a repository sends (flush takes the manager)',
  'apps/data/src/collections/indexes/property-indexer.ts': 'system: index DDL for every collection, run at boot',
  'apps/orchestration/src/orchestrations/reencrypt-orchestrations.ts':
    'system: the reencrypt command, over every workspace (docs/runbooks.md)',
  'apps/inbound/src/events/reencrypt-arrivals.ts':
    'system: the reencrypt command, over every workspace (docs/runbooks.md)',
  'apps/compute/src/reencrypt-compute.ts': 'system: the reencrypt command, over every workspace (docs/runbooks.md)',
  'apps/data/src/secrets/reencrypt-records.ts':
    'system: the reencrypt command, over every workspace (docs/runbooks.md)',
  'apps/auth/src/oidc/signing-keys.service.ts': 'system: the token signing keys (global, not per workspace)',
  'apps/auth/src/oidc/rotate-signing-key.ts': 'system: the key rotation command',
};

/** Files that may issue a WorkspaceScope, each with its reason. Tests may too. */
const ISSUERS = {
  'libs/platform/src/auth/access.guard.ts': "a request's workspace, once its credential is checked against it",
  'apps/data/src/records/ttl-sweeper.ts': 'the workspace of a record row the sweep claimed',
  'apps/data/src/records/retention-sweeper.ts': 'the workspace of a collection row the retention sweep read',
  'apps/data/src/collection-migrations/migration-runner.ts': 'the workspace of a migration job row the runner claimed',
  'apps/auth/src/workspaces/workspaces.service.ts': 'the workspace this transaction just created',
  'apps/auth/src/oidc/oidc.service.ts': "the token endpoint: the authenticated client's own workspace",
  'apps/webhooks/src/events/record-event-consumer.ts': 'the workspace of a record event taken from our own stream',
  'apps/auth/src/function-principals/function-principals.service.ts':
    'the boot-time pass over every workspace that makes missing function principals',
  'apps/compute/src/worker/job-consumer.ts': 'the workspace of a compute job taken from our own work queue',
  'apps/compute/src/events/trigger-event-consumer.ts': 'the workspace of a record event taken from our own stream',
  'apps/compute/src/schedules/trigger-scheduler.ts': 'the workspace of a due row the scheduler claimed',
  'apps/compute/src/runs/run-sweeper.ts': 'the workspace of a run row the sweep read (lost lease)',
  'apps/compute/src/endpoints/endpoint-calls.service.ts':
    "an endpoint call's URL workspace: it finds the endpoint, whose own auth mode then checks the caller",
  'apps/compute/src/worker/endpoint-server.ts': 'the workspace of an endpoint run our own API dispatched',
  'apps/compute/src/worker/event-run-server.ts': 'the workspace of a record event our own API offered the run of',
  'apps/inbound/src/arrivals/arrivals.service.ts':
    "an http-trigger arrival's URL workspace: it finds the trigger, whose signature check then decides",
  'apps/inbound/src/dispatch/inbound-sweeps.ts': 'the workspace of an arrival row the sweep read',
  'apps/storage/src/downloads/open-downloads.controller.ts':
    'the workspace a signed link names (its signature is checked against that workspace) or a public file is in',
  'apps/orchestration/src/events/orchestration-event-consumer.ts':
    'the workspace of a record event taken from our own stream',
  'apps/orchestration/src/schedules/orchestration-scheduler.ts': 'the workspace of a due row the scheduler claimed',
  'apps/orchestration/src/runs/embedded-engine.ts':
    "the workspace of a run row the engine claimed, or of compute's notice that a step's function run ended",
  'apps/orchestration/src/temporal/temporal-engine.ts':
    'the workspace of a run row the engine claimed to start its workflow',
  'apps/orchestration/src/temporal/run-activities.ts':
    "the workspace of the run the engine started a workflow for (the workflow's argument, from the run row)",
  'apps/orchestration/src/webhooks/webhook-runs.service.ts':
    "a webhook's URL workspace: it finds the orchestration, whose signature check then decides",
  'apps/compute/src/runs/function-runs-directory.ts':
    'the workspace our own orchestration service names for a compute step (internal NATS)',
  'apps/compute/src/functions/function-directory.ts':
    'the workspace our own orchestration service names when it checks its steps (internal NATS)',
  'apps/auth/src/plans/plans-directory.ts':
    'the workspace our own services name when they ask its plan (internal NATS)',
  'apps/auth/src/plans/workspace-plan.controller.ts':
    'a workspace the caller was just checked to belong to, or any for a platform administrator',
  'libs/platform/src/plans/usage-questions.ts':
    'the workspace our own auth service names when it gathers usage (internal NATS)',
  'apps/data/src/usage/data-usage.ts': 'a counter row the usage reconciliation read',
  'apps/compute/src/http-triggers/http-trigger-directory.ts':
    'the workspace our own inbound service names for an arrival on its URL (internal NATS)',
};

// Tests, and the support files of an app's integration tests (apps/<app>/test/).
const TEST = /(\.spec|\.int-spec|\.e2e-spec)\.ts$|^(e2e|testkit|bench)\/|^apps\/[^/]+\/test\//;

const relative = (context) => path.relative(ROOT, context.filename).split(path.sep).join('/');

const dataAccess = {
  meta: {
    type: 'problem',
    docs: { description: 'Only repositories reach the database: services take repositories, never TypeORM.' },
    schema: [],
  },
  create(context) {
    const file = relative(context);
    // Every app, including those added later.
    if (!file.startsWith('apps/') || TEST.test(file)) return {};
    // Entities only declare a table's mapping; the statements stay in repositories.
    if (
      file.endsWith('.repository.ts') ||
      file.endsWith('.entity.ts') ||
      file.includes('/migrations/') ||
      file in DATA_ACCESS
    ) {
      return {};
    }
    return {
      ImportDeclaration(node) {
        if (node.source.value === 'typeorm' || node.source.value === '@nestjs/typeorm') {
          context.report({
            node,
            message:
              'Only *.repository.ts files use TypeORM: put the statement in a repository method that takes the WorkspaceScope.',
          });
        }
      },
    };
  },
};

const scopeIssuers = {
  meta: {
    type: 'problem',
    docs: { description: 'Only the access guard and the listed trusted sources issue a WorkspaceScope.' },
    schema: [],
  },
  create(context) {
    const file = relative(context);
    if (file.startsWith('libs/db/')) return {};
    const mayIssue = file in ISSUERS || TEST.test(file);
    const cast = (node) =>
      context.report({ node, message: 'A WorkspaceScope is issued, never cast: take it from @CallerScope().' });
    return {
      ImportSpecifier(node) {
        if (mayIssue || node.parent.source.value !== '@strata/db') return;
        if (node.imported.name === 'issueWorkspaceScope') {
          context.report({
            node,
            message:
              'Only the access guard and the trusted sources listed in eslint/workspace-scope.js issue a WorkspaceScope: take it from @CallerScope().',
          });
        }
      },
      'TSAsExpression[typeAnnotation.typeName.name="WorkspaceScope"]': cast,
      'TSTypeAssertion[typeAnnotation.typeName.name="WorkspaceScope"]': cast,
    };
  },
};

export const workspaceScopePlugin = {
  rules: { 'data-access': dataAccess, 'scope-issuers': scopeIssuers },
};
