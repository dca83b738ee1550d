import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM envelope encryption with a versioned key ring.
 *
 * Each value gets a fresh 256-bit data key; the data key is wrapped with the
 * ring's active key-encryption key, whose version travels in the envelope so
 * that older values stay readable after the active key changes.
 *
 * Envelope: `sv1.<keyVersion>.<wrapped data key>.<iv>.<tag>.<ciphertext>`, each part base64url.
 */
export class KeyRing {
  private readonly keys: ReadonlyMap<number, Buffer>;
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
   * unless `activeVersion` names another.
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

  encrypt(plaintext: string | Buffer, associatedData = ''): string {
    const dataKey = randomBytes(32);
    const wrapped = seal(this.key(this.activeVersion), dataKey, `wrap:${this.activeVersion}`);
    const body = seal(dataKey, Buffer.isBuffer(plaintext) ? plaintext : Buffer.from(plaintext, 'utf8'), associatedData);
    return ['sv1', String(this.activeVersion), pack(wrapped), body.iv, body.tag, body.ciphertext].join('.');
  }

  decrypt(envelope: string, associatedData = ''): Buffer {
    const parts = envelope.split('.');
    if (parts.length !== 8 || parts[0] !== 'sv1') throw new Error('not a Strata envelope');
    const version = Number(parts[1]);
    const [wiv, wtag, wct] = [parts[2]!, parts[3]!, parts[4]!];
    const dataKey = open(this.key(version), { iv: wiv, tag: wtag, ciphertext: wct }, `wrap:${version}`);
    return open(dataKey, { iv: parts[5]!, tag: parts[6]!, ciphertext: parts[7]! }, associatedData);
  }

  decryptString(envelope: string, associatedData = ''): string {
    return this.decrypt(envelope, associatedData).toString('utf8');
  }

  /** The key version an envelope was written with (to find values to re-encrypt). */
  static versionOf(envelope: string): number {
    return Number(envelope.split('.')[1]);
  }

  private key(version: number): Buffer {
    const key = this.keys.get(version);
    if (!key) throw new Error(`key version ${version} is not in the ring`);
    return key;
  }
}

interface Sealed {
  iv: string;
  tag: string;
  ciphertext: string;
}

function seal(key: Buffer, plaintext: Buffer, aad: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv: b64(iv), tag: b64(cipher.getAuthTag()), ciphertext: b64(ciphertext) };
}

function open(key: Buffer, sealed: Sealed, aad: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64url'));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64url')), decipher.final()]);
}

function pack(s: Sealed): string {
  return [s.iv, s.tag, s.ciphertext].join('.');
}

function b64(buf: Buffer): string {
  return buf.toString('base64url');
}
