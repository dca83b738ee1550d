import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { isUniqueViolation, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock, StrataException } from '@strata/platform';
import { RunsRepository } from '../runs/runs.repository.js';
import { SchedulesRepository } from '../schedules/schedules.repository.js';
import { TriggersRepository } from '../triggers/triggers.repository.js';
import { TriggerChanges } from '../triggers/trigger-changes.js';
import type { CreateFunctionRequest, UpdateFunctionRequest } from './dto/function.requests.js';
import type { FunctionListQueryRequest } from './dto/function-list.query.js';
import { assertRunnableCode, codeHash } from './function-code.js';
import { parseFunctionSort } from './function-list.js';
import { functionVersionView, functionView, type FunctionVersionView, type FunctionView } from './function-view.js';
import type { FunctionEntity } from './function.entity.js';
import { FunctionsRepository } from './functions.repository.js';
import { ComputeQuota } from '../usage/compute-quota.js';

export const FUNCTION_NOT_FOUND = 'Function not found.';
export const FUNCTION_NAME_TAKEN = 'Function with that name already exists.';

export interface FunctionList {
  functions: FunctionView[];
  total: number;
  page: number;
  limit: number;
}

/** Functions of a workspace: create, read, list, update (each save a version), delete. */
@Injectable()
export class FunctionsService {
  constructor(
    private readonly functions: FunctionsRepository,
    private readonly runs: RunsRepository,
    private readonly triggers: TriggersRepository,
    private readonly schedules: SchedulesRepository,
    private readonly transactions: Transactions,
    private readonly changes: TriggerChanges,
    private readonly clock: Clock,
    private readonly quota: ComputeQuota,
  ) {}

  async create(scope: WorkspaceScope, by: string, body: CreateFunctionRequest): Promise<FunctionView> {
    return functionView(await this.transactions.run((tx) => this.createIn(scope, tx, by, body)));
  }

  /** Creates a function (and its version 1) inside `tx`: the create endpoint and draft publishing. */
  async createIn(scope: WorkspaceScope, tx: Tx, by: string, body: CreateFunctionRequest): Promise<FunctionEntity> {
    assertRunnableCode(body.code);
    // Within the workspace's plan (docs/plans.md), counted under a lock until `tx` ends.
    await this.quota.ensureRoom(scope, tx, 'functions');
    const fields = {
      id: randomUUID(),
      name: body.name,
      description: body.description ?? null,
      code: body.code,
      codeHash: codeHash(body.code),
      by,
    };
    try {
      return await this.transactions.savepoint(tx, () => this.functions.insert(scope, tx, fields, this.clock.now()));
    } catch (err) {
      if (isUniqueViolation(err, 'functions_name_key')) throw StrataException.conflict(FUNCTION_NAME_TAKEN);
      throw err;
    }
  }

  async get(scope: WorkspaceScope, id: string): Promise<FunctionView> {
    const found = await this.functions.find(scope, id);
    if (!found) throw StrataException.notFound(FUNCTION_NOT_FOUND);
    return functionView(found);
  }

  async list(scope: WorkspaceScope, q: FunctionListQueryRequest): Promise<FunctionList> {
    const sorted = parseFunctionSort(q.sort);
    if ('errors' in sorted) throw StrataException.validation(sorted.errors);
    const query = {
      search: q.search || undefined,
      searchField: q.searchField ?? 'name',
      limit: q.limit ?? 500,
      page: q.page ?? 1,
      sort: sorted.sort,
    };
    const { rows, total } = await this.functions.list(scope, query);
    return { functions: rows.map(functionView), total, page: query.page, limit: query.limit };
  }

  async update(scope: WorkspaceScope, by: string, id: string, body: UpdateFunctionRequest): Promise<FunctionView> {
    if (body.name === undefined && body.description === undefined && body.code === undefined) {
      throw StrataException.validation([{ field: 'body', message: 'Give at least one of name, description, code.' }]);
    }
    if (body.code !== undefined) assertRunnableCode(body.code);
    try {
      const updated = await this.transactions.run(async (tx) => {
        const current = await this.functions.find(scope, id, tx);
        if (!current) throw StrataException.notFound(FUNCTION_NOT_FOUND);
        return this.functions.update(
          scope,
          tx,
          current,
          {
            name: body.name,
            description: body.description,
            code: body.code,
            codeHash: body.code === undefined ? undefined : codeHash(body.code),
          },
          by,
          this.clock.now(),
        );
      });
      // Its triggers run the new version from now on.
      await this.changes.changed(scope);
      return functionView(updated);
    } catch (err) {
      if (isUniqueViolation(err, 'functions_name_key')) throw StrataException.conflict(FUNCTION_NAME_TAKEN);
      throw err;
    }
  }

  /** Deletes the function and its triggers; its queued runs are cancelled, its versions and past runs stay for audit. */
  async delete(scope: WorkspaceScope, by: string, id: string): Promise<{ success: true; message: string }> {
    await this.transactions.run(async (tx) => {
      const now = this.clock.now();
      if (!(await this.functions.softDelete(scope, tx, id, by, now))) {
        throw StrataException.notFound(FUNCTION_NOT_FOUND);
      }
      await this.runs.cancelQueuedOfFunction(scope, tx, id, 'The function was deleted.', now);
      // Its triggers stop with it (scheduled ones leave the scheduler's list).
      await this.schedules.removeOfFunction(scope, tx, id);
      await this.triggers.deleteOfFunction(scope, tx, id, by, now);
    });
    await this.changes.changed(scope);
    return { success: true, message: 'Function deleted.' };
  }

  async versions(scope: WorkspaceScope, id: string): Promise<{ versions: FunctionVersionView[] }> {
    if (!(await this.functions.find(scope, id))) throw StrataException.notFound(FUNCTION_NOT_FOUND);
    return { versions: (await this.functions.versions(scope, id)).map(functionVersionView) };
  }

  async version(scope: WorkspaceScope, id: string, version: number): Promise<FunctionVersionView> {
    if (!(await this.functions.find(scope, id))) throw StrataException.notFound(FUNCTION_NOT_FOUND);
    const found = await this.functions.version(scope, id, version);
    if (!found) throw StrataException.notFound('Function version not found.');
    return functionVersionView(found);
  }
}
