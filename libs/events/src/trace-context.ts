import { context, propagation, type Context } from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';

/** Writes the active W3C trace context into NATS message headers. */
export function injectTraceContext(target: MsgHdrs = natsHeaders()): MsgHdrs {
  propagation.inject(context.active(), target, {
    set: (carrier, key, value) => carrier.set(key, value),
  });
  return target;
}

/** Reads the W3C trace context a publisher put in the headers. */
export function extractTraceContext(source: MsgHdrs | undefined): Context {
  if (!source) return context.active();
  return propagation.extract(context.active(), source, {
    get: (carrier, key) => carrier.get(key) || undefined,
    keys: (carrier) => carrier.keys(),
  });
}
