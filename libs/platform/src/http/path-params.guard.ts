import { ExecutionContext, Injectable, type CanActivate } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { FieldError } from '@strata/contracts';
import { rememberErrorShape } from '../errors/error-shape.decorator.js';
import { StrataException } from '../errors/strata.exception.js';
import { printable, textProblem } from './text-checks.js';

/**
 * The first guard of every route: a route parameter whose decoded value holds
 * NUL (`/structures/slug/%00`) is a 400 naming the parameter, before any other
 * guard or handler passes it on to PostgreSQL (which refuses it with a 500).
 * Runs before the access guard, so it also records the route's error shape.
 */
@Injectable()
export class PathParamsGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    rememberErrorShape(this.reflector, context);
    const params = context.switchToHttp().getRequest<Request>().params as Record<string, unknown> | undefined;
    const problems: FieldError[] = [];
    for (const [name, value] of Object.entries(params ?? {})) {
      // A wildcard parameter (`*path`) is an array of decoded segments.
      const texts = Array.isArray(value) ? (value as unknown[]) : [value];
      const problem = texts.map((text) => (typeof text === 'string' ? textProblem(text) : undefined)).find(Boolean);
      if (problem) problems.push({ field: printable(name), message: problem });
    }
    if (problems.length > 0) {
      const first = problems[0]!;
      throw StrataException.validation(problems, `Invalid path parameter: ${first.field} ${first.message}`);
    }
    return true;
  }
}
