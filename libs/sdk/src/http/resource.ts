import type { Query, RequestOptions, Transport } from './transport.js';

/** A JSON value, as the platform stores and answers it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** `{success, message}`, the answer of deletes and state changes in the functions API. */
export interface SuccessMessage {
  readonly success: boolean;
  readonly message: string;
}

/** Per-call options every method takes. */
export interface CallOptions {
  readonly signal?: AbortSignal;
}

/** One path segment, encoded. */
export const segment = (value: string | number): string => encodeURIComponent(String(value));

/** The calls of one group of endpoints under one base path (`{data_base}`, `{orch_base}`, an IAM base). */
export abstract class Resource {
  constructor(
    protected readonly transport: Transport,
    protected readonly base: string,
  ) {}

  protected read<T>(path: string, query?: Query, options?: CallOptions): Promise<T> {
    return this.call<T>('GET', path, { query, signal: options?.signal });
  }

  protected call<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    return this.transport.request<T>(method, `${this.base}${path}`, options);
  }
}
