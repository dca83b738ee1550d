import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

const SECRET_KEYS = Symbol('strata:secret-config-keys');

/** Marks a setting whose value must never be printed. */
export function Secret(): PropertyDecorator {
  return (target, key) => {
    const keys =
      (Reflect.getMetadata(SECRET_KEYS, target) as Set<string | symbol> | undefined) ?? new Set<string | symbol>();
    keys.add(key);
    Reflect.defineMetadata(SECRET_KEYS, keys, target);
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads and validates a service's settings once, at boot. Property names are the
 * environment variable names; defaults are the property initialisers.
 * Throws a {@link ConfigError} naming every bad setting.
 */
export function loadConfig<T extends object>(
  schema: new () => T,
  env: Readonly<Record<string, string | undefined>> = process.env,
): T {
  const defaults = new schema() as Record<string, unknown>;
  const raw: Record<string, unknown> = { ...defaults };
  for (const key of Object.keys(defaults)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = coerce(value, defaults[key]);
  }
  const config = plainToInstance(schema, raw);
  const errors = validateSync(config, { whitelist: true, forbidUnknownValues: true });
  if (errors.length > 0) {
    const secret = secretKeys(config);
    throw new ConfigError(errors.map((e) => describe(e, secret.has(e.property))));
  }
  return Object.freeze(config);
}

/** Environment values are strings; read them as the default's type (number, boolean). */
function coerce(value: string, fallback: unknown): unknown {
  if (typeof fallback === 'number') return /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
  if (typeof fallback === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}

function describe(error: ValidationError, isSecret: boolean): string {
  const reasons = Object.values(error.constraints ?? {}).join('; ');
  const shown = isSecret ? '[secret]' : JSON.stringify(error.value);
  return `${error.property}=${shown}: ${reasons}`;
}

function secretKeys(config: object): Set<string | symbol> {
  return (
    (Reflect.getMetadata(SECRET_KEYS, Object.getPrototypeOf(config) as object) as Set<string | symbol> | undefined) ??
    new Set()
  );
}

/** For `main`: loads the settings, or prints every bad one and exits 78 (EX_CONFIG). */
export function loadConfigOrExit<T extends object>(schema: new () => T, service: string): T {
  try {
    return loadConfig(schema);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${service}: ${err.message}\n`);
    process.exit(78);
  }
}

/** The settings with secrets masked, for a start-up log line. */
export function describeConfig(config: object): Record<string, unknown> {
  const secret = secretKeys(config);
  return Object.fromEntries(
    Object.entries(config).map(([k, v]) => [k, secret.has(k) && v !== undefined ? '[secret]' : v]),
  );
}
