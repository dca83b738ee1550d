import { InboundEvents1765000000000 } from './1765000000000-inbound-events.js';
import { InboundAutoPersist1765000000001 } from './1765000000001-inbound-auto-persist.js';
import { InboundUndispatched1765000000002 } from './1765000000002-inbound-undispatched.js';
import { InboundDeliveryIds1765000000003 } from './1765000000003-inbound-delivery-ids.js';
import { InboundSealBindings1766100000001 } from './1766100000001-inbound-seal-bindings.js';
import { InboundSignatureClaims1766200000000 } from './1766200000000-inbound-signature-claims.js';

export const INBOUND_SCHEMA = 'inbound';
export const MIGRATIONS = [
  InboundEvents1765000000000,
  InboundAutoPersist1765000000001,
  InboundUndispatched1765000000002,
  InboundDeliveryIds1765000000003,
  InboundSealBindings1766100000001,
  InboundSignatureClaims1766200000000,
];
