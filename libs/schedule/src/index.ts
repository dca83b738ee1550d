export * from './schedule.js';
export * from './next-due.js';
