import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Injectable,
  SetMetadata,
  UseInterceptors,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { Observable } from 'rxjs';

export interface DeprecationInfo {
  /** Sunset date, ISO `YYYY-MM-DD`; sent as an HTTP-date. */
  readonly sunset: string;
  /** The successor path; `:name` parameters are filled from the request's route parameters. */
  readonly successor: string;
}

const DEPRECATION = 'strata:deprecation';

/** Sets `Deprecation: true`, `Sunset` and `Link: <successor>; rel=successor-version` on a response. */
export function setDeprecationHeaders(
  res: Pick<Response, 'setHeader'> | { setHeader(name: string, value: string): unknown },
  info: DeprecationInfo,
  params: Record<string, string> = {},
): void {
  const successor = info.successor.replace(/:([A-Za-z0-9_]+)/g, (whole, name: string) =>
    params[name] !== undefined ? encodeURIComponent(params[name]) : whole,
  );
  res.setHeader('Deprecation', 'true');
  res.setHeader('Sunset', new Date(`${info.sunset}T23:59:59Z`).toUTCString());
  res.setHeader('Link', `<${successor}>; rel="successor-version"`);
}

@Injectable()
export class DeprecationInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const info = this.reflector.getAllAndOverride<DeprecationInfo | undefined>(DEPRECATION, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (info) {
      const http = context.switchToHttp();
      setDeprecationHeaders(
        http.getResponse<Response>(),
        info,
        http.getRequest<Request>().params as Record<string, string>,
      );
    }
    return next.handle();
  }
}

/** Marks a route as a deprecated variant; it answers with the deprecation headers. */
export const Deprecated = (info: DeprecationInfo): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(DEPRECATION, info), UseInterceptors(DeprecationInterceptor));
