import type { FunctionEntity } from './function.entity.js';
import type { FunctionVersionEntity } from './function-version.entity.js';
import type { FunctionSummary } from './functions.repository.js';

/** A function as the API answers it (the spec's fields, plus version and codeHash). */
export interface FunctionView {
  id: string;
  name: string;
  description: string | null;
  code?: string;
  workspaceSlug: string;
  version: number;
  codeHash: string;
  createdBy: string;
  updatedBy: string;
  createdAt: string;
  updatedAt: string;
}

export function functionView(f: FunctionEntity | FunctionSummary): FunctionView {
  return {
    id: f.id,
    name: f.name,
    description: f.description,
    ...('code' in f ? { code: f.code } : {}),
    workspaceSlug: f.workspaceSlug,
    version: f.version,
    codeHash: f.codeHash,
    createdBy: f.createdBy,
    updatedBy: f.updatedBy,
    createdAt: f.createdAt.toISOString(),
    updatedAt: f.updatedAt.toISOString(),
  };
}

/** One saved version: who saved what, when (with the code when read alone). */
export interface FunctionVersionView {
  functionId: string;
  version: number;
  name: string;
  description: string | null;
  codeHash: string;
  code?: string;
  createdBy: string;
  createdAt: string;
}

export function functionVersionView(
  v: FunctionVersionEntity | Omit<FunctionVersionEntity, 'code'>,
): FunctionVersionView {
  return {
    functionId: v.functionId,
    version: v.version,
    name: v.name,
    description: v.description,
    codeHash: v.codeHash,
    ...('code' in v ? { code: v.code } : {}),
    createdBy: v.createdBy,
    createdAt: v.createdAt.toISOString(),
  };
}
