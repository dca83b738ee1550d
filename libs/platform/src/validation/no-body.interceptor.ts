import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { Observable } from 'rxjs';
import { StrataException } from '../errors/strata.exception.js';

/** Parameters through which a handler reads its body (or might: the whole request). */
const READS_BODY = new Set<number>([RouteParamtypes.BODY, RouteParamtypes.RAW_BODY, RouteParamtypes.REQUEST]);

/** Whether a handler of this class takes a body, by handler (read once from Nest's parameter metadata). */
const takesBody = new WeakMap<object, boolean>();

/**
 * Refuses a body sent to a route that takes none (a pause, a replay, a publish):
 * as with any body, a field the endpoint does not document is a 400, one entry
 * per field (docs/requests.md). No body, or `{}`, passes. A handler that reads
 * its body, or the whole request (raw captures, the OIDC interaction forms), is
 * left alone. An interceptor, so it runs after the guards: a caller without
 * access hears 401 or 403 first, as from the validation pipe.
 */
@Injectable()
export class NoBodyInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http' || this.takesBody(context)) return next.handle();
    const body: unknown = context.switchToHttp().getRequest<{ body?: unknown }>().body;
    if (body === undefined || body === null) return next.handle();
    if (typeof body === 'object' && !Array.isArray(body)) {
      const fields = Object.keys(body);
      if (fields.length === 0) return next.handle();
      throw StrataException.validation(
        fields.map((field) => ({ field, message: `property ${field} should not exist (this endpoint takes no body)` })),
      );
    }
    throw StrataException.validation([{ field: 'body', message: 'This endpoint takes no body.' }]);
  }

  private takesBody(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let known = takesBody.get(handler);
    if (known === undefined) {
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), handler.name) ?? {}) as object;
      known = Object.keys(args).some((key) => READS_BODY.has(Number(key.split(':')[0])));
      takesBody.set(handler, known);
    }
    return known;
  }
}
