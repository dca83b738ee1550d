import type { JsonObject, JsonValue } from '../http/resource.js';
import type { QueryDefinition } from '../records/types.js';

export type VariableType = 'string' | 'number' | 'boolean' | 'uuid' | 'datetime' | (string & {});

/** A declared variable: required unless `required: false`. */
export interface VariableDeclaration {
  readonly type: VariableType;
  readonly required?: boolean;
  readonly default?: JsonValue;
}

export interface SavedQueryInput {
  readonly name: string;
  readonly query: QueryDefinition;
  readonly variables?: Readonly<Record<string, VariableDeclaration>>;
  readonly description?: string;
}

export interface SavedQuery {
  readonly id: string;
  readonly name: string;
  readonly resource: string;
  readonly query: QueryDefinition;
  readonly variables: Record<string, VariableDeclaration>;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface SavedQueryTest {
  readonly query: QueryDefinition;
  readonly variables?: Readonly<Record<string, VariableDeclaration>>;
  /** The values to run the test with. */
  readonly values?: JsonObject;
}
