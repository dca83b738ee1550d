import { SetMetadata } from '@nestjs/common';
import type { ErrorShape } from '@strata/contracts';

export const ERROR_SHAPE = 'strata:error-shape';

/** The error body shape of a controller or route (the app's default otherwise). */
export const UseErrorShape = (shape: ErrorShape): ClassDecorator & MethodDecorator => SetMetadata(ERROR_SHAPE, shape);
