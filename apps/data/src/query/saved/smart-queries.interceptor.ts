import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';
import { setDeprecationHeaders } from '@strata/platform';

/** Saved queries' deprecated forms (`{{var}}`, `/smart-queries`, the slug route) sunset together. */
export const SAVED_QUERIES_SUNSET = '2026-10-29';

/** Requests that arrived through `/smart-queries/...` answer with the deprecation headers of the alias. */
@Injectable()
export class SmartQueriesAliasInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    if (req.path.includes('/smart-queries')) {
      setDeprecationHeaders(http.getResponse<Response>(), {
        sunset: SAVED_QUERIES_SUNSET,
        successor: req.path.replace('/smart-queries', '/saved-queries'),
      });
    }
    return next.handle();
  }
}
