import { WebhooksSubscriptions1763800000000 } from './1763800000000-webhooks-subscriptions.js';
import { WebhooksDeliveries1763900000000 } from './1763900000000-webhooks-deliveries.js';
import { WebhooksBreakerPerWorkspace1764000000000 } from './1764000000000-webhooks-breaker-per-workspace.js';
import { WebhooksSealBindings1766100000004 } from './1766100000004-webhooks-seal-bindings.js';
import { WebhooksRetention1766400000000 } from './1766400000000-webhooks-retention.js';
import { WebhooksSubscriptionOwnerType1767400000001 } from './1767400000001-webhooks-subscription-owner-type.js';

export const WEBHOOKS_SCHEMA = 'webhooks';
export const MIGRATIONS = [
  WebhooksSubscriptions1763800000000,
  WebhooksDeliveries1763900000000,
  WebhooksBreakerPerWorkspace1764000000000,
  WebhooksSealBindings1766100000004,
  WebhooksRetention1766400000000,
  WebhooksSubscriptionOwnerType1767400000001,
];
