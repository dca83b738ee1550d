import { Injectable } from '@nestjs/common';
import { ErrorCode, type Collection, type FieldError } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { checkBody } from '../../schema/checked-body.js';
import { isPlainObject, show } from '../../schema/issues.js';
import { RecordSecrets } from '../../secrets/record-secrets.js';
import { toCollection } from '../collections.repository.js';
import { checkCollectionChange, checkNewCollection } from '../definition-checks.js';
import { CreateCollectionRequest, UpdateCollectionRequest } from '../dto/collection.requests.js';
import { newOptionalProperties, planMigration } from '../migrations/migration-plan.js';
import { MigrationsRepository } from '../migrations/migrations.repository.js';
import {
  FailureTally,
  recordProblems,
  referenceValues,
  withoutSecretValues,
  type ProposedSchema,
} from './record-fit.js';
import { RecordsScanRepository, type ScannedRecord } from './records-scan.repository.js';

/** Records read per page while checking a proposed definition (memory stays bounded by it). */
export const SCAN_BATCH = 500;
/** Failing records answered by id, and problems answered per record. */
export const SAMPLE_SIZE = 20;
const ERRORS_PER_RECORD = 20;
/** Field paths counted in `byField` at most. */
export const MAX_FIELDS = 200;

/** The answer of a definition check: it would be accepted, or every problem a create or an update would answer. */
export type DefinitionCheck = { valid: true } | { valid: false; errors: FieldError[] };

/** How the collection's live records fit a proposed definition. */
export interface RecordsFit {
  readonly checked: number;
  readonly failed: number;
  /** Failing records per field path (`data.age`), for the first {@link MAX_FIELDS} paths found. */
  readonly byField: Record<string, number>;
  /** The first failing records (in creation order), at most {@link SAMPLE_SIZE}, with their problems. */
  readonly sample: { id: string; errors: FieldError[] }[];
}

/**
 * Whether the proposed definition would start a migration (docs/data.md, "Migrations"): the
 * properties whose stored values it would convert and check; `required` is false when there
 * are none, or the collection has no record.
 */
export interface MigrationNeed {
  readonly required: boolean;
  readonly properties: string[];
}

/** The answer of a check of a collection's proposed definition: the definition's problems, or how the records fit it. */
export type ChangeCheck =
  | { valid: false; errors: FieldError[] }
  | { valid: boolean; errors: FieldError[]; records: RecordsFit; migration: MigrationNeed };

/**
 * `validate` of collections: a definition checked as a create or an update would check it,
 * and a proposed definition checked against the collection's live records, without saving
 * anything. Reads only, always within the caller's workspace.
 */
@Injectable()
export class DefinitionValidationService {
  constructor(
    private readonly scan: RecordsScanRepository,
    private readonly secrets: RecordSecrets,
    private readonly migrations: MigrationsRepository,
  ) {}

  /** `POST /structures/validate`: the body of `POST /structures`, checked as the create checks it. */
  async checkNew(scope: WorkspaceScope, raw: unknown): Promise<DefinitionCheck> {
    const { body, problems } = await checkBody(CreateCollectionRequest, definitionBody(raw));
    const live = await this.scan.liveCollections(scope);
    const checked = checkNewCollection(body, problems, live);
    const errors = [...checked.issues];
    if (body.recordSlug !== undefined && live.some((c) => c.record_slug === body.recordSlug)) {
      errors.push({
        field: 'recordSlug',
        message: `is taken: a collection with recordSlug '${body.recordSlug}' exists`,
      });
    }
    return errors.length ? { valid: false, errors } : { valid: true };
  }

  /**
   * `POST /structures/{id}/validate` with a definition: the body of `PUT /structures/{id}`,
   * checked as the update checks it, then every live record of the collection against the
   * result, a page at a time: counts, failing records per field, and a sample of them.
   */
  async checkChange(scope: WorkspaceScope, id: string, raw: unknown): Promise<ChangeCheck> {
    const { body, problems } = await checkBody(UpdateCollectionRequest, definitionBody(raw));
    const live = await this.scan.liveCollections(scope);
    const row = live.find((c) => c.id === id);
    if (!row) throw StrataException.notFound(`Collection ${id} not found`, ErrorCode.STRUCTURE_NOT_FOUND);
    const checked = checkCollectionChange(
      body,
      problems,
      row,
      live.filter((c) => c.id !== id),
    );
    if (checked.issues.length) return { valid: false, errors: [...checked.issues] };
    const proposed: ProposedSchema = {
      properties: checked.properties,
      schemaDiscoveryMode: checked.mode ?? row.schema_discovery_mode,
    };
    const records = await this.fit(scope, toCollection(row), proposed);
    const held = await this.migrations.heldFields(
      scope,
      undefined,
      id,
      newOptionalProperties(row.properties, checked.properties),
    );
    const migrated = planMigration(row.properties, checked.properties, held).map((f) => f.name);
    const required = migrated.length > 0 && (records.checked > 0 || (await this.scan.anyRecord(scope, id)));
    return { valid: records.failed === 0, errors: [], records, migration: { required, properties: migrated } };
  }

  private async fit(scope: WorkspaceScope, current: Collection, proposed: ProposedSchema): Promise<RecordsFit> {
    const tally = new FailureTally(SAMPLE_SIZE, ERRORS_PER_RECORD, MAX_FIELDS);
    for (let after: ScannedRecord | undefined; ;) {
      const page = await this.scan.page(scope, current.id, after, SCAN_BATCH);
      const problems = await this.pageProblems(scope, current, proposed, page);
      page.forEach((r, i) => tally.add(r.id, problems[i]!));
      tally.checked += page.length;
      if (page.length < SCAN_BATCH) break;
      after = page.at(-1);
    }
    return { checked: tally.checked, failed: tally.failed, byField: tally.byField, sample: tally.sample };
  }

  /** The problems of each record of a page: its own, and references to records that do not exist. */
  private async pageProblems(
    scope: WorkspaceScope,
    current: Collection,
    proposed: ProposedSchema,
    page: readonly ScannedRecord[],
  ): Promise<FieldError[][]> {
    const opened = page.map((r) => {
      try {
        return this.secrets.open(current, r.id, r.data);
      } catch {
        return undefined;
      }
    });
    const problems = page.map((_, i) => {
      const data = opened[i];
      return data ? recordProblems(proposed, data) : [{ field: 'data', message: 'its secret fields cannot be opened' }];
    });
    // Reference targets, one query per reference property for the whole page.
    const wanted = new Map<string, { targetField: string; target: string; keys: Set<string> }>();
    // (A reference field that already fails, by its type say, is not looked up.)
    const perRecord = opened.map((data, i) => {
      if (!data) return [];
      const failing = new Set(problems[i]!.map((p) => p.field));
      return referenceValues(proposed.properties, data).filter((r) => !failing.has(`data.${r.property.name}`));
    });
    for (const refs of perRecord) {
      for (const { property, values } of refs) {
        const targetField = property.targetField ?? 'id';
        const entry = wanted.get(property.name) ?? { targetField, target: property.target, keys: new Set<string>() };
        values.forEach((v) => entry.keys.add(targetField === 'id' ? v.toLowerCase() : v));
        wanted.set(property.name, entry);
      }
    }
    const found = new Map<string, Set<string>>();
    for (const [name, w] of wanted) {
      found.set(name, await this.scan.existingKeys(scope, w.target, w.targetField, [...w.keys]));
    }
    perRecord.forEach((refs, i) => {
      for (const { property, values } of refs) {
        const have = found.get(property.name)!;
        const byId = (property.targetField ?? 'id') === 'id';
        const missing = values.filter((v) => !have.has(byId ? v.toLowerCase() : v));
        if (missing.length) {
          problems[i]!.push({
            field: `data.${property.name}`,
            message: `names no record of ${property.target}: ${show(missing.length === 1 ? missing[0] : missing)}`,
          });
        }
      }
    });
    return problems.map((p) => withoutSecretValues(p, current.properties, proposed.properties));
  }
}

/** A definition check's body must be an object (a definition); anything else is a 400. */
function definitionBody(raw: unknown): Record<string, unknown> {
  if (!isPlainObject(raw)) throw StrataException.invalid('body', 'must be an object (a collection definition)');
  return raw;
}
