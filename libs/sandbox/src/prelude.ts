/**
 * The code the engine runs in every fresh context before the user's code, through `context.evalClosure`.
 *
 * It receives the host's references as closure arguments ($0..$3, never globals) and the run's
 * configuration as a JSON string ($4), builds the globals user code sees (`api`, `console`,
 * `triggerParams`, `executionParams`, `setTimeout`, `clearTimeout`), and returns `start`, which the
 * host calls (through a Reference that stays on the host) once the user's code has been evaluated.
 *
 * Rules it follows, because user code runs in the same realm afterwards and may replace any builtin
 * or prototype member (JSON.stringify, Array.prototype.*, Function.prototype.apply/call,
 * Promise.prototype.then, Object.prototype setters and getters):
 * - every builtin it needs later is captured now and called through the captured Reflect.apply;
 * - objects it hands to isolated-vm or serialises itself have a null prototype (nothing inherited to hook);
 * - only strings and numbers go to the host; the host re-checks everything it receives (type, size),
 *   so a prelude fooled by user code can at worst send the host a string it refuses.
 * `start` always resolves to a JSON string (the envelope the host reads), never throws.
 */
export const PRELUDE_FILENAME = 'strata:prelude';

/** What the host tells the prelude ($4, as JSON). */
export interface PreludeConfig {
  kind: 'run' | 'endpoint';
  triggerParams: unknown;
  executionParams: unknown;
  request: unknown;
  /** An orchestration step's run: the old form of `executionParams.steps` kept until `sunset` (below). */
  legacyStepOutputs: { sunset: string } | null;
  maxOutputBytes: number;
  maxLogBytes: number;
  maxLogEntries: number;
  maxArgBytes: number;
  maxTimers: number;
  /** Longest name, message and stack of an error, in characters. */
  maxErrorChars: number;
  methods: readonly string[];
  searchRecordsMessage: string;
  missingEntryMessage: string;
}

/** What `start` resolves to (JSON): a value (as its own JSON text, measured by the host) or an error. */
export type PreludeEnvelope =
  | { ok: true; value: string | null; response: string | null }
  | { ok: false; name: string; message: string; stack: string | null };

export const PRELUDE_SOURCE = String.raw`
'use strict';
const hostCall = $0, hostLog = $1, hostTimer = $2, hostClearTimer = $3;
const global = globalThis;
const ReflectApply = Reflect.apply;
const ObjectFreeze = Object.freeze;
const ObjectDefineProperty = Object.defineProperty;
const ObjectKeys = Object.keys;
const ObjectHasOwn = Object.hasOwn;
const ObjectCtor = Object;
const ArrayIsArray = Array.isArray;
const ReflectGet = Reflect.get;
const ReflectHas = Reflect.has;
const ProxyCtor = Proxy;
const FunctionBind = Function.prototype.bind;
const SymbolToPrimitive = Symbol.toPrimitive;
const NumberIsInteger = Number.isInteger;
const JSONParse = JSON.parse;
const JSONStringify = JSON.stringify;
const StringCtor = String;
const ErrorCtor = Error;
const TypeErrorCtor = TypeError;
const RangeErrorCtor = RangeError;
const PromiseCtor = Promise;
const PromiseReject = Promise.reject;
const PromiseThen = Promise.prototype.then;
const StringSlice = String.prototype.slice;
const callApply = hostCall.apply;
const logApplySync = hostLog.applySync;
const timerApply = hostTimer.apply;
const clearApplyIgnored = hostClearTimer.applyIgnored;
const ASYNC_STRING = ObjectFreeze({ __proto__: null, result: ObjectFreeze({ __proto__: null, promise: true, copy: true }) });
const config = JSONParse($4);
const noop = () => {};

const cut = (text, max) => (text.length > max ? ReflectApply(StringSlice, text, [0, max]) : text);
const safeString = (value) => {
  try {
    const text = StringCtor(value);
    return typeof text === 'string' ? text : '[unprintable]';
  } catch {
    return '[unprintable]';
  }
};
const rejectWith = (error) => ReflectApply(PromiseReject, PromiseCtor, [error]);

/** { name, message, stack } of anything thrown, as capped strings in a null-prototype object. */
const describe = (thrown) => {
  const out = { __proto__: null, name: 'Error', message: '', stack: null };
  try {
    if (thrown !== null && (typeof thrown === 'object' || typeof thrown === 'function')) {
      const name = thrown.name;
      const message = thrown.message;
      const stack = thrown.stack;
      if (typeof name === 'string') out.name = name;
      out.message = typeof message === 'string' ? message : message === undefined ? safeString(thrown) : safeString(message);
      if (typeof stack === 'string') out.stack = stack;
    } else {
      out.message = safeString(thrown);
    }
  } catch {
    out.message = '[an error whose properties could not be read]';
  }
  out.name = cut(out.name, config.maxErrorChars);
  out.message = cut(out.message, config.maxErrorChars);
  if (out.stack !== null) out.stack = cut(out.stack, config.maxErrorChars * 4);
  return out;
};

// ---- logs: counted and cut here, counted and cut again (in bytes) by the host ----
let logEntries = 0;
let logChars = 0;
let logDropped = false;
const dropLog = () => {
  if (logDropped) return;
  logDropped = true;
  ReflectApply(logApplySync, hostLog, [undefined, ['truncated', '']]);
};
const formatLogArguments = (args, budget) => {
  let out = '';
  for (let i = 0; i < args.length && out.length <= budget; i++) {
    const value = args[i];
    if (i > 0) out += ' ';
    if (typeof value === 'string') {
      out += value;
      continue;
    }
    let text;
    try {
      text = value instanceof ErrorCtor ? safeString(value.stack === undefined ? value : value.stack) : JSONStringify(value);
    } catch {
      text = undefined;
    }
    out += typeof text === 'string' ? text : safeString(value);
  }
  return out;
};
const emitLog = (level, args) => {
  const budget = config.maxLogBytes - logChars;
  if (logEntries >= config.maxLogEntries || budget <= 0) return dropLog();
  let message = formatLogArguments(args, budget);
  if (message.length > budget) {
    message = cut(message, budget);
    dropLog();
  }
  logEntries++;
  logChars += message.length;
  ReflectApply(logApplySync, hostLog, [undefined, [level, message]]);
};
const log = function log(...args) {
  emitLog('info', args);
};
log.info = function info(...args) {
  emitLog('info', args);
};
log.warn = function warn(...args) {
  emitLog('warn', args);
};
log.error = function error(...args) {
  emitLog('error', args);
};
log.debug = function debug(...args) {
  emitLog('debug', args);
};
ObjectFreeze(log);

// ---- api: everything but log goes to the host as (method, JSON of the arguments) ----
const unwrapReply = (reply) => {
  const parsed = JSONParse(reply);
  if (parsed.ok === true) return parsed.value;
  throw new ErrorCtor(parsed.message);
};
const bridged = (method) =>
  function (...args) {
    // Each argument on its own (undefined and functions become null, as in an array), joined by hand:
    // the list itself is ours, so no inherited toJSON or Array.prototype member is consulted for it.
    let json = '[';
    for (let i = 0; i < args.length; i++) {
      let part;
      try {
        part = JSONStringify(args[i]);
      } catch (error) {
        return rejectWith(new TypeErrorCtor('api.' + method + ': the arguments are not JSON-serialisable (' + describe(error).message + ')'));
      }
      json += (i > 0 ? ',' : '') + (typeof part === 'string' ? part : 'null');
      if (json.length > config.maxArgBytes) break;
    }
    json += ']';
    if (json.length > config.maxArgBytes) {
      return rejectWith(new RangeErrorCtor('api.' + method + ': the arguments exceed ' + config.maxArgBytes + ' bytes of JSON'));
    }
    const reply = ReflectApply(callApply, hostCall, [undefined, [method, json], ASYNC_STRING]);
    return ReflectApply(PromiseThen, reply, [unwrapReply]);
  };
const api = { __proto__: null };
api.log = log;
for (let i = 0; i < config.methods.length; i++) {
  const method = config.methods[i];
  ObjectDefineProperty(api, method, { __proto__: null, value: bridged(method), enumerable: true });
}
api.searchRecords = function searchRecords() {
  throw new TypeErrorCtor(config.searchRecordsMessage);
};
ObjectFreeze(api);

// ---- timers: the host sleeps (never past the run's wall-clock deadline); all cancelled when the run ends ----
const timers = { __proto__: null };
let timerSequence = 0;
let timersPending = 0;
const fireTimer = (id, outcome) => {
  const timer = timers[id];
  if (timer === undefined) return;
  delete timers[id];
  timersPending--;
  if (outcome !== 'fire') return;
  try {
    ReflectApply(timer.callback, undefined, timer.args);
  } catch (error) {
    emitLog('error', ['Uncaught error in a setTimeout callback:', error]);
  }
};
const setTimeout = function setTimeout(callback, delay, ...args) {
  if (typeof callback !== 'function') throw new TypeErrorCtor('setTimeout needs a function (code strings are not evaluated)');
  if (timersPending >= config.maxTimers) throw new RangeErrorCtor('Too many pending timers (at most ' + config.maxTimers + ')');
  let ms = typeof delay === 'number' ? delay : 0;
  if (!(ms > 0)) ms = 0;
  const id = ++timerSequence;
  timers[id] = { __proto__: null, callback, args };
  timersPending++;
  const outcome = ReflectApply(timerApply, hostTimer, [undefined, [id, ms], ASYNC_STRING]);
  ReflectApply(PromiseThen, outcome, [(result) => fireTimer(id, result), noop]);
  return id;
};
const clearTimeout = function clearTimeout(id) {
  if (typeof id !== 'number' || timers[id] === undefined) return;
  delete timers[id];
  timersPending--;
  ReflectApply(clearApplyIgnored, hostClearTimer, [undefined, [id]]);
};

// ---- an orchestration step's executionParams.steps: each output at steps.<id>.output, the old form kept ----
// Before 2026-11-29 the output itself was at steps.<id>. Until the sunset, steps.<id> answers the old
// reads too: a key the wrapper lacks and the output has (its fields, a list's items, length and methods,
// a string's), and a primitive output used as a value. Each step's first such read logs one warning.
// Enumeration and JSON (Object.keys, spread, JSON.stringify) see only the new form.
const legacyWarned = { __proto__: null };
const warnLegacyStep = (id, key) => {
  if (legacyWarned[id] === true) return;
  legacyWarned[id] = true;
  const at = 'executionParams.steps.' + id;
  const old = typeof key === 'string' ? at + '.' + key : key === SymbolToPrimitive ? at + ' used as a value' : at + ' (' + safeString(key) + ')';
  const now = typeof key === 'string' ? at + '.output.' + key : at + '.output';
  emitLog('warn', ['Deprecated: ' + old + " reads step '" + id + "' output the old way; read " + now + ' instead. The old form is removed after ' + config.legacyStepOutputs.sunset + ' (docs/orchestration.md).']);
};
const legacyStep = (id, wrapper) => {
  const output = wrapper.output;
  const primitive = output !== null && typeof output !== 'object';
  const source = output === null ? null : primitive ? ObjectCtor(output) : output;
  const isLegacyKey = (target, key) => source !== null && (ObjectHasOwn(source, key) || (!ReflectHas(target, key) && ReflectHas(source, key)));
  return new ProxyCtor(wrapper, {
    __proto__: null,
    get(target, key, receiver) {
      if (!ObjectHasOwn(target, key)) {
        if (isLegacyKey(target, key)) {
          warnLegacyStep(id, key);
          const value = ReflectGet(source, key);
          return typeof value === 'function' ? ReflectApply(FunctionBind, value, [source]) : value;
        }
        if (primitive && key === SymbolToPrimitive) {
          warnLegacyStep(id, key);
          return () => output;
        }
      }
      return ReflectGet(target, key, receiver);
    },
    has(target, key) {
      if (ObjectHasOwn(target, key) || !isLegacyKey(target, key)) return ReflectHas(target, key);
      warnLegacyStep(id, key);
      return true;
    },
  });
};
const keepLegacyStepOutputs = (params) => {
  if (params === null || typeof params !== 'object' || ArrayIsArray(params)) return;
  const steps = params.steps;
  if (steps === null || typeof steps !== 'object' || ArrayIsArray(steps)) return;
  const ids = ObjectKeys(steps);
  for (let i = 0; i < ids.length; i++) {
    const wrapper = steps[ids[i]];
    if (wrapper === null || typeof wrapper !== 'object' || ArrayIsArray(wrapper) || !ObjectHasOwn(wrapper, 'output')) continue;
    // Defined, not assigned: a step id __proto__ is a key like any other.
    ObjectDefineProperty(steps, ids[i], { __proto__: null, value: legacyStep(ids[i], wrapper), writable: true, enumerable: true, configurable: true });
  }
};
if (config.kind === 'run' && config.legacyStepOutputs !== null) keepLegacyStepOutputs(config.executionParams);

// ---- the globals user code sees ----
delete global.console; // V8's own console (prints nowhere); replaced below
delete global.WebAssembly; // memory outside the heap limit, compilation outside the CPU accounting
delete global.SharedArrayBuffer; // with Atomics.wait, a way to block the isolate's thread
delete global.FinalizationRegistry; // its callbacks run after a garbage collection: in a later run, charged to it
ObjectDefineProperty(global, 'api', { __proto__: null, value: api, writable: false, enumerable: false, configurable: false });
const console = ObjectFreeze({ __proto__: null, log: log, info: log.info, warn: log.warn, error: log.error, debug: log.debug });
const globals = { __proto__: null, console, setTimeout, clearTimeout, triggerParams: config.triggerParams, executionParams: config.executionParams };
const globalNames = ObjectKeys(globals);
for (let i = 0; i < globalNames.length; i++) {
  ObjectDefineProperty(global, globalNames[i], { __proto__: null, value: globals[globalNames[i]], writable: true, enumerable: false, configurable: true });
}

// ---- the result ----
const fail = (thrown) => {
  const error = describe(thrown);
  return JSONStringify({ __proto__: null, ok: false, name: error.name, message: error.message, stack: error.stack });
};
const failWith = (name, message) => JSONStringify({ __proto__: null, ok: false, name, message, stack: null });
const outputTooLarge = (what) => failWith('RangeError', what + ' is larger than the output limit of ' + config.maxOutputBytes + ' bytes');
const succeed = (value, response) => {
  let json;
  if (value !== undefined) {
    try {
      json = JSONStringify(value);
    } catch (error) {
      return failWith('TypeError', 'The return value is not JSON-serialisable: ' + describe(error).message);
    }
  }
  if (typeof json !== 'string') json = null;
  else if (json.length > config.maxOutputBytes) return outputTooLarge('The return value');
  return JSONStringify({ __proto__: null, ok: true, value: json, response });
};

// ---- endpoint: context.req and context.res.json ----
let response = null;
const json = function json(reply) {
  if (reply === null || typeof reply !== 'object') throw new TypeErrorCtor('context.res.json needs an object: { statusCode, headers, body }');
  const statusCode = reply.statusCode === undefined ? 200 : reply.statusCode;
  if (!NumberIsInteger(statusCode) || statusCode < 100 || statusCode > 599) {
    throw new RangeErrorCtor('context.res.json: statusCode must be an integer from 100 to 599');
  }
  const given = reply.headers === undefined || reply.headers === null ? { __proto__: null } : reply.headers;
  if (typeof given !== 'object' || ArrayIsArray(given)) throw new TypeErrorCtor('context.res.json: headers must be an object of strings');
  const headers = { __proto__: null };
  const names = ObjectKeys(given);
  for (let i = 0; i < names.length; i++) {
    const value = given[names[i]];
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new TypeErrorCtor('context.res.json: the header ' + names[i] + ' must be a string');
    }
    headers[names[i]] = StringCtor(value);
  }
  const body = reply.body === undefined ? null : reply.body;
  const text = JSONStringify({ __proto__: null, statusCode, headers, body });
  if (typeof text !== 'string' || text.length > config.maxOutputBytes + 65536) throw new RangeErrorCtor('context.res.json: the response is larger than the output limit of ' + config.maxOutputBytes + ' bytes');
  response = text;
};

return async function start(namespace) {
  try {
    if (config.kind === 'run') {
      const run = global.run;
      if (typeof run !== 'function') return failWith('Error', config.missingEntryMessage);
      const value = await ReflectApply(run, undefined, []);
      return succeed(value, null);
    }
    const handler = namespace.default;
    if (typeof handler !== 'function') return failWith('Error', config.missingEntryMessage);
    const context = { req: config.request, res: ObjectFreeze({ json }) };
    const value = await ReflectApply(handler, undefined, [context]);
    return succeed(value, response);
  } catch (error) {
    return fail(error);
  }
};
`;
