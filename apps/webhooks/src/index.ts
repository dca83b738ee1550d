export { WebhooksConfig } from './webhooks.config.js';
export { createWebhooksApp, migrateWebhooks } from './create-webhooks-app.js';
