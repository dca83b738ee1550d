export { WebhooksConfig } from './webhooks.config.js';
export { createWebhooksApp, migrateWebhooks } from './create-webhooks-app.js';
export { reencryptWebhooks } from './subscriptions/reencrypt-subscriptions.js';
