/** A JSON value as stored in a jsonb column (what a parsed request body holds). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };
