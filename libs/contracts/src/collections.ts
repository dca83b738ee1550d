/** Collections (structures) and their property definitions, as the data API returns them. */

export const PROPERTY_TYPES = ['string', 'number', 'boolean', 'datetime', 'array', 'object', 'reference'] as const;
export type PropertyType = (typeof PROPERTY_TYPES)[number];

/** Item types of an `array` property: `array` (and `reference`) are not allowed. */
export const ARRAY_ITEM_TYPES = ['string', 'number', 'boolean', 'datetime', 'object'] as const;
export type ArrayItemType = (typeof ARRAY_ITEM_TYPES)[number];

export const RENDER_AS = ['textarea', 'secret', 'color', 'code', 'html', 'markdown'] as const;
export const COMPUTED_MODES = ['persisted', 'virtual'] as const;
export type ComputedMode = (typeof COMPUTED_MODES)[number];
export const RELATIONSHIPS = ['many-to-one', 'one-to-one', 'many-to-many'] as const;
export type Relationship = (typeof RELATIONSHIPS)[number];
export const ON_DELETE_RULES = ['restrict', 'cascade', 'set_null'] as const;
export type OnDeleteRule = (typeof ON_DELETE_RULES)[number];

export const SCHEMA_DISCOVERY_MODES = ['strict', 'auto-evolving', 'schemaless'] as const;
export type SchemaDiscoveryMode = (typeof SCHEMA_DISCOVERY_MODES)[number];
export const COLLECTION_STATUSES = ['active', 'inactive'] as const;
export type CollectionStatus = (typeof COLLECTION_STATUSES)[number];

interface CommonProperty {
  id: string;
  name: string;
  description?: string;
  required: boolean;
  nullable: boolean;
  default?: unknown;
  enum?: unknown[];
  isUnique: boolean;
  immutable: boolean;
  /** Strata extension: keep an index for filtering and sorting on this property (present only when true). */
  indexed?: true;
}

export interface StringProperty extends CommonProperty {
  type: 'string';
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  renderAs?: (typeof RENDER_AS)[number];
  isSecret: boolean;
  not?: string[];
}

export interface NumberProperty extends CommonProperty {
  type: 'number';
  minimum?: number;
  maximum?: number;
  exclusiveMinimum: boolean;
  exclusiveMaximum: boolean;
  multipleOf?: number;
  expression?: string;
  computedMode?: ComputedMode;
  autoIncrement?: { startAt: number; incrementBy: number };
}

export interface BooleanProperty extends CommonProperty {
  type: 'boolean';
}

export interface DatetimeProperty extends CommonProperty {
  type: 'datetime';
  earliestDate?: string;
  latestDate?: string;
  exclusiveEarliest: boolean;
  exclusiveLatest: boolean;
  expression?: string;
  computedMode?: ComputedMode;
}

/** What each element of an array property is: a type and that type's constraints. */
export type ArrayItems =
  | Pick<StringProperty, 'type' | 'minLength' | 'maxLength' | 'pattern' | 'enum' | 'not'>
  | Pick<
      NumberProperty,
      'type' | 'minimum' | 'maximum' | 'exclusiveMinimum' | 'exclusiveMaximum' | 'multipleOf' | 'enum'
    >
  | Pick<BooleanProperty, 'type' | 'enum'>
  | Pick<DatetimeProperty, 'type' | 'earliestDate' | 'latestDate' | 'exclusiveEarliest' | 'exclusiveLatest' | 'enum'>
  | { type: 'object' };

export interface ArrayProperty extends CommonProperty {
  type: 'array';
  items: ArrayItems;
  itemSchema?: PropertyDefinition[];
  strictProperties: boolean;
  minItems?: number;
  maxItems?: number;
  uniqueItems: boolean;
}

export interface ObjectProperty extends CommonProperty {
  type: 'object';
  properties: PropertyDefinition[];
  requiredProperties: string[];
  strictProperties: boolean;
}

export interface ReferenceProperty extends CommonProperty {
  type: 'reference';
  target: string;
  targetField: string;
  displayField?: string;
  relationship: Relationship;
  onDelete: OnDeleteRule;
}

export type PropertyDefinition =
  | StringProperty
  | NumberProperty
  | BooleanProperty
  | DatetimeProperty
  | ArrayProperty
  | ObjectProperty
  | ReferenceProperty;

export interface SchemaDiscoveryConfig {
  batchSize: number;
  maxKeysPerRecord: number;
  maxNestingDepth: number;
  maxStringLengthSampled: number;
}

export const DEFAULT_SCHEMA_DISCOVERY_CONFIG: Readonly<SchemaDiscoveryConfig> = {
  batchSize: 10,
  maxKeysPerRecord: 100,
  maxNestingDepth: 3,
  maxStringLengthSampled: 1000,
};

/** Kept versions of a versioned collection's records (not in the spec: designed here). */
export interface RetentionPolicy {
  /** Keep at most this many versions per record (the newest). */
  maxVersions?: number;
  /**
   * Drop versions older than this many days (the current version is always kept), and changelog
   * entries older than this many days (instead of the platform's DATA_CHANGELOG_RETENTION_DAYS).
   */
  maxAgeDays?: number;
}

export interface CollectionMetadata {
  recordWritesLocked: boolean;
  structureWritesLocked: boolean;
  migrationInProgress: boolean;
  migrationJobId?: string;
  lastMigrationId?: string;
}

export interface Collection {
  id: string;
  workspaceSlug: string;
  recordSlug: string;
  name: string;
  description?: string;
  properties: PropertyDefinition[];
  status: CollectionStatus;
  schemaDiscoveryMode: SchemaDiscoveryMode;
  schemaDiscoveryConfig: SchemaDiscoveryConfig;
  enableVersioning: boolean;
  retentionPolicy?: RetentionPolicy;
  defaultSearchField?: string;
  metadata: CollectionMetadata;
  tags: string[];
  createdBy: string;
  lastUpdatedBy: string;
  createdAt: string;
  updatedAt: string;
  isDeleted: boolean;
}
