import { type MsgHdrs, headers as natsHeaders } from '@nats-io/transport-node';
import { type Context, propagation, ROOT_CONTEXT, type TextMapGetter } from '@opentelemetry/api';
import { activeTraceHeaders } from '../trace-headers';

/** The active trace context as NATS headers, added to `into` when given; undefined when none. */
export function activeNatsTraceHeaders(into?: MsgHdrs): MsgHdrs | undefined {
  const carried = activeTraceHeaders();
  if (carried === undefined) return into;
  const target = into ?? natsHeaders();
  for (const [name, value] of Object.entries(carried)) target.set(name, value);
  return target;
}

const natsGetter: TextMapGetter<MsgHdrs | undefined> = {
  keys: (carrier) => (carrier ? carrier.keys() : []),
  get: (carrier, key) => {
    const value = carrier?.get(key);
    return value === undefined || value === '' ? undefined : value;
  },
};

/** The context a received NATS message's handler runs in: the sender's trace, or none. */
export function natsTraceContextOf(headers: MsgHdrs | undefined): Context {
  return headers === undefined
    ? ROOT_CONTEXT
    : propagation.extract(ROOT_CONTEXT, headers, natsGetter);
}
