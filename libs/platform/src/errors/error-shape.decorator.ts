import { SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { ErrorShape } from '@strata/contracts';
import { SHAPE_ON_REQUEST } from './error.filter.js';

export const ERROR_SHAPE = 'strata:error-shape';

/** The error body shape of a controller or route (the app's default otherwise). */
export const UseErrorShape = (shape: ErrorShape): ClassDecorator & MethodDecorator => SetMetadata(ERROR_SHAPE, shape);

/** Records the route's declared error shape on the request, for the error filter. */
export function rememberErrorShape(reflector: Reflector, context: ExecutionContext): void {
  const shape = reflector.getAllAndOverride<ErrorShape | undefined>(ERROR_SHAPE, [
    context.getHandler(),
    context.getClass(),
  ]);
  if (shape) context.switchToHttp().getRequest<{ [SHAPE_ON_REQUEST]?: ErrorShape }>()[SHAPE_ON_REQUEST] = shape;
}
