import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';
import { bindingCandidates, type Binding } from './associated-data.js';
import { freshRandomBytes } from './random.js';

/** `sv1.<key version>.` then six base64url parts: wrapped data key (iv, tag, ciphertext) and body (iv, tag, ciphertext). */
const ENVELOPE =
  /^sv1\.[1-9]\d{0,8}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/;

/** An envelope that does not open: not an envelope, a key version the ring lacks, or one that fails authentication. */
export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
}

/** What {@link KeyRing.open} found: the plaintext and which of the candidate associated data it was sealed with. */
export interface Opened {
  readonly plaintext: Buffer;
  /** Index into the candidates that opened the envelope. */
  readonly binding: number;
  /** The key version the envelope was written with. */
  readonly keyVersion: number;
}

/** Values sealed with one data key before the ring makes a new one. */
export const DATA_KEY_USES = 4096;

/** Unwrapped data keys kept for opening (the most recently used). */
const OPENED_DATA_KEYS = 1024;

interface DataKey {
  readonly version: number;
  readonly key: KeyObject;
  /** The data key wrapped with the key-encryption key: three envelope parts. */
  readonly wrapped: string;
  uses: number;
}

/**
 * AES-256-GCM envelope encryption with a versioned key ring.
 *
 * Values are sealed with a random 256-bit data key, each with its own random
 * 96-bit IV; the data key is wrapped with the ring's active key-encryption key,
 * whose version travels in the envelope so that older values stay readable
 * after the active key changes. A data key seals at most {@link DATA_KEY_USES}
 * values (then the ring makes a new one), far inside GCM's bound for random
 * IVs under one key (2^32), and lives only in this process's memory, as the
 * key-encryption keys do. Reusing it saves wrapping a new key for every value:
 * a seal is one AES-GCM operation instead of two, and opening a value whose
 * data key was opened recently is one as well. The caller's associated data
 * binds the value to where it is stored (a record's field, a subscription):
 * the same envelope opened with other associated data fails.
 *
 * Envelope: `sv1.<keyVersion>.<wrapped data key>.<iv>.<tag>.<ciphertext>`, each part base64url.
 *
 * Retiring a key version: make a newer one active, re-encrypt every stored
 * envelope of the old version ({@link reencrypt}, driven by each service's
 * `reencrypt` command), then remove the old version from the ring
 * (docs/runbooks.md).
 */
export class KeyRing {
  private readonly keys: ReadonlyMap<number, Buffer>;
  private readonly cipherKeys = new Map<number, KeyObject>();
  private dataKey: DataKey | undefined;
  /** Opened data keys by their version and wrapped form (authenticated when first opened). */
  private readonly openedDataKeys = new Map<string, KeyObject>();
  readonly activeVersion: number;

  constructor(keys: ReadonlyMap<number, Buffer>, activeVersion?: number) {
    if (keys.size === 0) throw new Error('the key ring needs at least one key');
    for (const [version, key] of keys) {
      if (!Number.isInteger(version) || version < 1)
        throw new Error(`key version ${version} is not a positive integer`);
      if (key.length !== 32) throw new Error(`key version ${version} must be 32 bytes (AES-256), got ${key.length}`);
    }
    this.keys = keys;
    this.activeVersion = activeVersion ?? Math.max(...keys.keys());
    if (!keys.has(this.activeVersion)) throw new Error(`active key version ${this.activeVersion} is not in the ring`);
  }

  /**
   * Parses `1:<base64 32 bytes>,2:<base64 32 bytes>`; the highest version is active
   * unless `activeVersion` names another (a new key is first added to every
   * replica's ring inactive, then made active: no replica meets an envelope of a
   * version it does not know).
   */
  static parse(spec: string, activeVersion?: number): KeyRing {
    const keys = new Map<number, Buffer>();
    for (const part of spec
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const sep = part.indexOf(':');
      if (sep < 1) throw new Error('each key must be written <version>:<base64 key>');
      const version = Number(part.slice(0, sep));
      if (keys.has(version)) throw new Error(`key version ${version} appears twice`);
      keys.set(version, Buffer.from(part.slice(sep + 1), 'base64'));
    }
    return new KeyRing(keys, activeVersion);
  }

  /** The versions the ring holds, oldest first. */
  get versions(): number[] {
    return [...this.keys.keys()].sort((a, b) => a - b);
  }

  has(version: number): boolean {
    return this.keys.has(version);
  }

  encrypt(plaintext: string | Buffer, associatedData = ''): string {
    const dataKey = this.sealingKey();
    const body = seal(
      dataKey.key,
      Buffer.isBuffer(plaintext) ? plaintext : Buffer.from(plaintext, 'utf8'),
      associatedData,
    );
    return ['sv1', String(dataKey.version), dataKey.wrapped, body.iv, body.tag, body.ciphertext].join('.');
  }

  /** The data key to seal the next value with: the current one until it has sealed DATA_KEY_USES values. */
  private sealingKey(): DataKey {
    const current = this.dataKey;
    if (current && current.uses < DATA_KEY_USES) {
      current.uses++;
      return current;
    }
    const raw = freshRandomBytes(32);
    const wrapped = pack(seal(this.cipherKey(this.activeVersion), raw, `wrap:${this.activeVersion}`));
    this.dataKey = { version: this.activeVersion, key: createSecretKey(raw), wrapped, uses: 1 };
    return this.dataKey;
  }

  decrypt(envelope: string, associatedData = ''): Buffer {
    return this.open(envelope, [associatedData]).plaintext;
  }

  decryptString(envelope: string, associatedData = ''): string {
    return this.decrypt(envelope, associatedData).toString('utf8');
  }

  /**
   * Opens an envelope sealed with any one of `candidates` as associated data
   * (the first that authenticates wins), for a caller that changed how it binds
   * values and still reads the older binding. The data key is unwrapped once.
   */
  open(envelope: string, candidates: readonly string[]): Opened {
    const parts = envelope.split('.');
    if (parts.length !== 8 || parts[0] !== 'sv1') throw new EnvelopeError('not a Strata envelope');
    const keyVersion = Number(parts[1]);
    const bodyKey = this.openDataKey(keyVersion, parts[2]!, parts[3]!, parts[4]!);
    const body = { iv: parts[5]!, tag: parts[6]!, ciphertext: parts[7]! };
    for (const [binding, aad] of candidates.entries()) {
      try {
        return { plaintext: open(bodyKey, body, aad), binding, keyVersion };
      } catch {
        // Not this binding: try the next one.
      }
    }
    throw new EnvelopeError(
      'the envelope does not authenticate with its associated data (tampered, or moved from elsewhere)',
    );
  }

  /**
   * The data key of an envelope, unwrapped with its key version (kept once it
   * authenticated, so the values it sealed open with one AES-GCM operation each).
   */
  private openDataKey(keyVersion: number, iv: string, tag: string, ciphertext: string): KeyObject {
    const id = `${keyVersion}.${iv}.${tag}.${ciphertext}`;
    const kept = this.openedDataKeys.get(id);
    if (kept) {
      // Most recently used last: the first entry is the one to drop.
      this.openedDataKeys.delete(id);
      this.openedDataKeys.set(id, kept);
      return kept;
    }
    let raw: Buffer;
    try {
      raw = open(this.cipherKey(keyVersion), { iv, tag, ciphertext }, `wrap:${keyVersion}`);
    } catch (err) {
      if (err instanceof EnvelopeError) throw err;
      throw new EnvelopeError(`the data key does not unwrap with key version ${keyVersion} (tampered)`);
    }
    const key = createSecretKey(raw);
    if (this.openedDataKeys.size >= OPENED_DATA_KEYS) {
      this.openedDataKeys.delete(this.openedDataKeys.keys().next().value!);
    }
    this.openedDataKeys.set(id, key);
    return key;
  }

  /**
   * The envelope again under the active key and `to` as associated data
   * (default: the one it was sealed with). Answers the same envelope when there
   * is nothing to do: already under the active key and no new binding.
   */
  reencrypt(envelope: string, from: string | readonly string[], to?: string): string {
    const candidates = typeof from === 'string' ? [from] : from;
    const opened = this.open(envelope, candidates);
    const target = to ?? candidates[opened.binding]!;
    if (opened.keyVersion === this.activeVersion && candidates[opened.binding] === target) return envelope;
    return this.encrypt(opened.plaintext, target);
  }

  /** Seals `plaintext` where `binding` says (its current associated data). */
  seal(plaintext: string | Buffer, binding: Binding): string {
    return this.encrypt(plaintext, binding.aad);
  }

  /**
   * Opens an envelope sealed where `binding` says, now or by an earlier release
   * (`binding` of the answer: 0 for the current associated data, more for a legacy one).
   */
  unseal(envelope: string, binding: Binding): Opened {
    return this.open(envelope, bindingCandidates(binding));
  }

  /** {@link unseal}'s plaintext as UTF-8 text. */
  unsealString(envelope: string, binding: Binding): string {
    return this.unseal(envelope, binding).plaintext.toString('utf8');
  }

  /**
   * The envelope under the active key and the binding's current associated
   * data; the same envelope when it already is (what `reencrypt` and the
   * upgrade step write back).
   */
  reseal(envelope: string, binding: Binding): string {
    return this.reencrypt(envelope, bindingCandidates(binding), binding.aad);
  }

  /** Whether a value has the form of an envelope (says nothing of whether it opens). */
  static isEnvelope(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith('sv1.') && ENVELOPE.test(value);
  }

  /**
   * A keyed digest of `data` (HMAC-SHA256 under a key derived from the active
   * key), naming the key version: `m<version>.<base64url>`. For fingerprints of
   * requests that may hold secrets: a plain hash of a short secret is guessed
   * offline from a copy of the database; this needs the key too.
   */
  mac(data: string | Buffer): string {
    return `m${this.activeVersion}.${macOf(this.key(this.activeVersion), data).toString('base64url')}`;
  }

  /**
   * Whether `tag` is the {@link mac} of `data`: true or false, or undefined when
   * it cannot be told (not a tag of ours, or its key version is no longer in the ring).
   */
  verifyMac(data: string | Buffer, tag: string): boolean | undefined {
    const match = /^m([1-9]\d{0,8})\.([A-Za-z0-9_-]{43})$/.exec(tag);
    const key = match ? this.keys.get(Number(match[1])) : undefined;
    if (!match || !key) return undefined;
    return timingSafeEqual(macOf(key, data), Buffer.from(match[2]!, 'base64url'));
  }

  /** The key version an envelope was written with (to find values to re-encrypt). */
  static versionOf(envelope: string): number {
    return Number(envelope.split('.')[1]);
  }

  /**
   * A version's key as a KeyObject, made once: a cipher given a Buffer builds
   * one each time, about three times the cost of the encryption itself here.
   */
  private cipherKey(version: number): KeyObject {
    let key = this.cipherKeys.get(version);
    if (!key) {
      key = createSecretKey(this.key(version));
      this.cipherKeys.set(version, key);
    }
    return key;
  }

  private key(version: number): Buffer {
    const key = this.keys.get(version);
    if (!key) throw new EnvelopeError(`key version ${version} is not in the ring`);
    return key;
  }
}

interface Sealed {
  iv: string;
  tag: string;
  ciphertext: string;
}

function seal(key: KeyObject, plaintext: Buffer, aad: string): Sealed {
  const iv = freshRandomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv: b64(iv), tag: b64(cipher.getAuthTag()), ciphertext: b64(ciphertext) };
}

function open(key: KeyObject, sealed: Sealed, aad: string): Buffer {
  // A full 16-byte tag only: GCM would otherwise accept a truncated one, which is easier to forge.
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64url'), { authTagLength: 16 });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64url')), decipher.final()]);
}

/** HMAC-SHA256 under a subkey of `key` kept for digests (a key is never used both to encrypt and to authenticate). */
function macOf(key: Buffer, data: string | Buffer): Buffer {
  const subkey = createHmac('sha256', key).update('strata:mac:v1').digest();
  return createHmac('sha256', subkey).update(data).digest();
}

function pack(s: Sealed): string {
  return [s.iv, s.tag, s.ciphertext].join('.');
}

function b64(buf: Buffer): string {
  return buf.toString('base64url');
}
