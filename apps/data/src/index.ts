export { validateProperties } from './schema/validate-properties.js';
