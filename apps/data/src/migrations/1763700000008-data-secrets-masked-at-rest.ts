import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A JSON string holding a key-ring envelope (`sv1.<version>.` and six base64url parts). */
const ENVELOPE_JSON =
  '"sv1\\.[1-9][0-9]{0,8}\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]*"';

/** The top-level secret fields of each collection (nested secrets did not exist before this release). */
const SECRET_FIELDS = `secret AS (
  SELECT c.id AS collection_id, array_agg(p->>'name') AS names
    FROM data.collections c, jsonb_array_elements(c.properties) p
   WHERE p->>'type' = 'string' AND (p->>'isSecret')::boolean
   GROUP BY c.id)`;

/** `{old, new}` of a secret field masked (null stays null). */
const MASKED_CHANGE = `jsonb_build_object(
  'old', CASE WHEN coalesce(e.value->'old', 'null'::jsonb) = 'null'::jsonb THEN 'null'::jsonb ELSE '"********"'::jsonb END,
  'new', CASE WHEN coalesce(e.value->'new', 'null'::jsonb) = 'null'::jsonb THEN 'null'::jsonb ELSE '"********"'::jsonb END)`;

/**
 * Secrets at rest outside the records' own sealed fields. Changes in the changelog
 * and in versions were masked when written, but a field made secret later kept
 * its earlier values there in plain; a secret field removed or renamed left its
 * envelopes in later changes and in discovery samples; and a stored upsert
 * response (`Idempotency-Key`) kept whatever the first caller was shown, secrets
 * revealed. All of these are masked now: they hold no secret, plain or sealed.
 * Rows of record data and versions that hold a plain value in a secret field are
 * sealed by `reencrypt` (it needs the key ring; docs/runbooks.md).
 *
 * Irreversible: `down` cannot bring back what was masked, and does nothing.
 */
export class DataSecretsMaskedAtRest1763700000008 implements MigrationInterface {
  name = 'DataSecretsMaskedAtRest1763700000008';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['record_changelog', 'record_versions']) {
      const key = table === 'record_changelog' ? 'l.id = t.id' : 'l.record_id = t.record_id AND l.version = t.version';
      await q.query(`WITH ${SECRET_FIELDS}
        UPDATE data.${table} t SET changes = (
          SELECT jsonb_object_agg(e.key, CASE WHEN e.key = ANY(s.names) THEN ${MASKED_CHANGE} ELSE e.value END)
            FROM jsonb_each(l.changes) e)
          FROM data.${table} l JOIN data.records r ON r.id = l.record_id JOIN secret s ON s.collection_id = r.collection_id
         WHERE ${key} AND l.changes ?| s.names`);
      await q.query(
        `UPDATE data.${table} SET changes = regexp_replace(changes::text, $1, '"********"', 'g')::jsonb
          WHERE changes::text LIKE '%"sv1.%'`,
        [ENVELOPE_JSON],
      );
    }
    // A stored upsert response whose record is gone cannot be masked by its collection's schema.
    await q.query(`DELETE FROM data.idempotency_keys k
      WHERE NOT EXISTS (SELECT 1 FROM data.records r WHERE r.id::text = k.response->'data'->>'id')`);
    await q.query(`WITH ${SECRET_FIELDS}
      UPDATE data.idempotency_keys k SET response = jsonb_set(k.response, '{data,data}', (
        SELECT coalesce(jsonb_object_agg(e.key, CASE WHEN e.key = ANY(s.names) AND e.value <> 'null'::jsonb
                                                     THEN '"********"'::jsonb ELSE e.value END), '{}'::jsonb)
          FROM jsonb_each(k.response->'data'->'data') e))
        FROM data.records r JOIN secret s ON s.collection_id = r.collection_id
       WHERE r.id::text = k.response->'data'->>'id' AND jsonb_typeof(k.response->'data'->'data') = 'object'`);
    await q.query(
      `UPDATE data.idempotency_keys SET response = regexp_replace(response::text, $1, '"********"', 'g')::jsonb
        WHERE response::text LIKE '%"sv1.%'`,
      [ENVELOPE_JSON],
    );
    await q.query(
      `UPDATE data.schema_suggestions SET sample = regexp_replace(sample, $1, '"********"', 'g')
        WHERE sample LIKE '%"sv1.%'`,
      [ENVELOPE_JSON],
    );
  }

  async down(): Promise<void> {
    // Masked values cannot be brought back.
  }
}
