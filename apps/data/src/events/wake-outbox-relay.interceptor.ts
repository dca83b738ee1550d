import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { finalize, type Observable } from 'rxjs';
import { OutboxRelay } from './outbox-relay.js';

/**
 * On routes that write record events: once the request's work is over (its
 * transaction committed, or its failure event written), wakes this replica's
 * outbox relay so that the events leave now rather than at the next poll.
 */
@Injectable()
export class WakeOutboxRelay implements NestInterceptor {
  constructor(private readonly relay: OutboxRelay) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const { method } = context.switchToHttp().getRequest<Request>();
    if (method === 'GET' || method === 'HEAD') return next.handle();
    return next.handle().pipe(finalize(() => this.relay.wake()));
  }
}
