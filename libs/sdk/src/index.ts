export * from './client.js';
export * from './login.js';
