import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `api.invokeTrigger` now needs `function-triggers:execute` of the workspace's function
 * principal, which every new principal's group is given. The groups made before get it
 * once here, so that what their functions did until now they still may do: an
 * administrator restricts it from then on like any policy. A group that already has a
 * function-triggers policy is left as its administrator set it.
 */
export class FunctionsInvokeTriggers1763600000001 implements MigrationInterface {
  name = 'FunctionsInvokeTriggers1763600000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `INSERT INTO iam.policies (id, group_id, resource, actions)
       SELECT gen_random_uuid(), g.id, 'function-triggers', ARRAY['execute']
         FROM iam.groups g
         JOIN iam.group_members m ON m.group_id = g.id AND m.principal_type = 'service_account'
                                 AND m.principal_id = 'ci_functions_' || g.workspace_slug
        WHERE g.name LIKE 'compute-functions%'
       ON CONFLICT (group_id, resource) DO NOTHING`,
    );
  }

  async down(): Promise<void> {
    // The policy is an administrator's from now on: nothing to take back.
  }
}
