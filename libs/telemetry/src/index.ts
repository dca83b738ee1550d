export * from './json-logger.js';
export * from './start.js';
export { metricsPortOf } from './metrics-endpoint.js';
export * from './request-metrics.js';
