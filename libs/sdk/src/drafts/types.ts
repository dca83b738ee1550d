import type { JsonObject } from '../http/resource.js';

export type DraftResourceType = 'compute-functions' | 'function-triggers';

export interface Draft {
  readonly id: string;
  readonly resourceType: DraftResourceType;
  /** The body the resource will be created with (secrets sealed). */
  readonly data: JsonObject;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt?: string;
}
