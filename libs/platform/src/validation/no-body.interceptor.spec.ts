import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Body, Param, RawBody, Req, type CallHandler, type ExecutionContext } from '@nestjs/common';
import { of } from 'rxjs';
import { CallerScope } from '../auth/access.decorators.js';
import { StrataException } from '../errors/strata.exception.js';
import { NoBodyInterceptor } from './no-body.interceptor.js';

/** Handlers as a controller declares them: Nest's parameter decorators write the metadata the interceptor reads. */
class Routes {
  takesNothing(@Param('id') _id: string, @CallerScope() _scope: unknown) {}
  takesBody(@Body() _body: unknown) {}
  takesOneField(@Body('name') _name: string) {}
  readsRequest(@Req() _req: unknown) {}
  readsRawBody(@RawBody() _raw: Buffer) {}
}

function contextFor(handler: keyof Routes, body: unknown): ExecutionContext {
  return {
    getType: () => 'http',
    getClass: () => Routes,
    getHandler: () => Routes.prototype[handler],
    switchToHttp: () => ({ getRequest: () => ({ body }) }),
  } as unknown as ExecutionContext;
}

const next: CallHandler = { handle: () => of('handled') };
const interceptor = new NoBodyInterceptor();
const outcome = (handler: keyof Routes, body: unknown): 'passed' | StrataException => {
  try {
    interceptor.intercept(contextFor(handler, body), next);
    return 'passed';
  } catch (err) {
    if (err instanceof StrataException) return err;
    throw err;
  }
};

describe('NoBodyInterceptor', () => {
  it('lets a route that takes no body through without one, or with {}', () => {
    for (const body of [undefined, null, {}]) expect(outcome('takesNothing', body)).toBe('passed');
  });

  it('refuses each field of a body sent to it, and any other body as a whole', () => {
    const fields = outcome('takesNothing', { a: 1, b: 2 });
    expect(fields).toBeInstanceOf(StrataException);
    expect((fields as StrataException).details).toEqual([
      { field: 'a', message: 'property a should not exist (this endpoint takes no body)' },
      { field: 'b', message: 'property b should not exist (this endpoint takes no body)' },
    ]);
    for (const body of [[1], 'text', 3]) {
      expect((outcome('takesNothing', body) as StrataException).details).toEqual([
        { field: 'body', message: 'This endpoint takes no body.' },
      ]);
    }
  });

  it('leaves alone a handler that reads its body, one of its fields, the raw body or the whole request', () => {
    for (const handler of ['takesBody', 'takesOneField', 'readsRequest', 'readsRawBody'] as const) {
      expect(outcome(handler, { anything: true })).toBe('passed');
    }
  });
});
