export { WebhooksConfig } from './webhooks.config.js';
export { createWebhooksApp, migrateWebhooks } from './create-webhooks-app.js';
export type { WebhooksAppOptions } from './app.module.js';
export { reencryptWebhooks, upgradeWebhooks } from './subscriptions/reencrypt-subscriptions.js';
