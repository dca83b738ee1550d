import { WebhooksSubscriptions1763800000000 } from './1763800000000-webhooks-subscriptions.js';

export const WEBHOOKS_SCHEMA = 'webhooks';
export const MIGRATIONS = [WebhooksSubscriptions1763800000000];
