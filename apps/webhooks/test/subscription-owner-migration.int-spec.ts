import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { createTestDatabase } from '@strata/testing';
import { serviceDataSourceOptions } from '@strata/db';
import { MIGRATIONS, WEBHOOKS_SCHEMA } from '../src/migrations/index.js';

describe("the subscription owner's type migration", () => {
  it('gives existing subscriptions their owner type from the id: ci_… a service account, else a user', async () => {
    const db = await createTestDatabase('strata_webhooks_owner_type');
    const at = MIGRATIONS.findIndex((m) => m.name === 'WebhooksSubscriptionOwnerType1767400000001');
    expect(at).toBeGreaterThan(0);
    const open = (migrations: typeof MIGRATIONS) =>
      new DataSource(serviceDataSourceOptions({ url: db.url, schema: WEBHOOKS_SCHEMA, entities: [], migrations }));
    const before = open(MIGRATIONS.slice(0, at));
    try {
      await before.initialize();
      await before.query(`CREATE SCHEMA ${WEBHOOKS_SCHEMA}`);
      await before.runMigrations({ transaction: 'each' });
      for (const createdBy of ['ci_0123456789abcdef', randomUUID(), 'ci_functions_acme']) {
        await before.query(
          `INSERT INTO webhooks.subscriptions (id, workspace_slug, name, url, events, secret, created_by)
           VALUES ($1, 'a', 'hook', 'https://hooks.example.test', '{record_created}', 'sealed', $2)`,
          [randomUUID(), createdBy],
        );
      }
    } finally {
      await before.destroy();
    }
    const after = open(MIGRATIONS);
    try {
      await after.initialize();
      await after.runMigrations({ transaction: 'each' });
      const rows = await after.query<{ created_by: string; created_by_type: string }[]>(
        'SELECT created_by, created_by_type FROM webhooks.subscriptions',
      );
      const types = rows.map((r) => [r.created_by.startsWith('ci_'), r.created_by_type]);
      expect(types.sort()).toEqual([
        [false, 'user'],
        [true, 'service_account'],
        [true, 'service_account'],
      ]);
    } finally {
      await after.destroy();
      await db.drop();
    }
  });
});
