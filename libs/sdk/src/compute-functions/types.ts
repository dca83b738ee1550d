import type { JsonObject } from '../http/resource.js';

export interface ComputeFunction {
  readonly id: string;
  readonly name: string;
  readonly description?: string | null;
  /** Left out of list rows. */
  readonly code?: string;
  readonly workspaceSlug: string;
  readonly version?: number;
  readonly createdBy?: string;
  readonly updatedBy?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface ComputeFunctionInput {
  readonly name: string;
  readonly description?: string;
  /** JavaScript defining `async function run()` (or `export default async (context)` for endpoints). */
  readonly code: string;
}

export interface SortOrder {
  readonly field: string;
  readonly direction: 'asc' | 'desc';
}

export interface NamedListQuery {
  readonly search?: string;
  /** Default `name`. */
  readonly searchField?: string;
  readonly limit?: number;
  /** From 1. */
  readonly page?: number;
  readonly sort?: readonly SortOrder[];
}

export interface ComputeFunctionList {
  readonly functions: ComputeFunction[];
  readonly total: number;
  readonly page: number;
  readonly limit: number;
}

export interface FunctionVersion {
  readonly functionId: string;
  readonly version: number;
  readonly name: string;
  readonly description: string | null;
  /** SHA-256 of the code. */
  readonly codeHash: string;
  /** In the detail of one version only. */
  readonly code?: string;
  readonly createdBy: string;
  readonly createdAt: string;
}

/** The answer of a test run: the run is queued; read it with `functionRuns.list({jobId})`. */
export interface QueuedRun {
  readonly jobId: string;
  readonly status: 'queued';
  readonly queuedAt: string;
}

export interface AllowedDomain {
  readonly domain: string;
  readonly createdBy?: string;
  readonly createdAt: string;
}

export type TestParams = JsonObject;
