import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, serviceAccountToken, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
const suffix = Date.now().toString(36);
const ws = `sto-${suffix}`;
const otherWs = `sto-other-${suffix}`;
let token: string;
let otherToken: string;

const base = (workspace = ws) => `${stack.baseUrl}/storage/workspace/${workspace}/api/v1`;
/** A 1×1 PNG, then bytes after its end (a PNG by its signature, whatever follows). */
const PNG = Buffer.concat([
  Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64',
  ),
  randomBytes(2000),
]);

/** Every file under the storage directory (objects and partial writes). */
async function filesOnDisk(): Promise<string[]> {
  const root = stack.storageConfig.STORAGE_LOCAL_DIR;
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}
const onDisk = async (id: string) => (await filesOnDisk()).some((f) => f.endsWith(id));

async function upload(
  fields: Record<string, string>,
  file: Buffer | undefined,
  options: {
    filename?: string;
    type?: string;
    token?: string;
    headers?: Record<string, string>;
    workspace?: string;
  } = {},
) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file)
    form.append(
      'file',
      new Blob([file], { type: options.type ?? 'application/octet-stream' }),
      options.filename ?? 'x.bin',
    );
  const res = await fetch(`${base(options.workspace)}/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.token ?? token}`, ...options.headers },
    body: form,
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body };
}

beforeAll(async () => {
  stack = await startStack({ STORAGE_PURGE_INTERVAL_MS: '200' }, { storage: true });
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
  const created = await call('POST', `${base()}/buckets`, {
    token,
    body: { name: 'images', maxFileBytes: 4096, allowedTypes: ['image/*'] },
  });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await stack?.stop();
});

describe('storage: uploads and downloads', () => {
  let fileId: string;
  const bytes = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz'.repeat(100));

  it('uploads a file (201) with its sniffed type, size, sha256 and defaults', async () => {
    const res = await upload({ metadata: JSON.stringify({ owner: 'me' }) }, bytes, {
      filename: 'notes/readme.txt',
      type: 'text/plain',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      workspace: ws,
      bucket: 'default',
      name: 'readme.txt',
      size: bytes.length,
      contentType: 'text/plain',
      sha256: createHash('sha256').update(bytes).digest('hex'),
      etag: `"${createHash('sha256').update(bytes).digest('hex')}"`,
      visibility: 'private',
      metadata: { owner: 'me' },
      link: null,
      status: 'ready',
      createdBy: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    fileId = res.body.id;
    expect(await onDisk(fileId)).toBe(true);
  });

  it('answers metadata as JSON, bytes with alt=media, ranges (206/416) and 304', async () => {
    const meta = await call('GET', `${base()}/files/${fileId}`, { token });
    expect(meta.status).toBe(200);
    expect(meta.body.id).toBe(fileId);
    const whole = await fetch(`${base()}/files/${fileId}?alt=media`, { headers: { authorization: `Bearer ${token}` } });
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(bytes);
    expect(whole.headers.get('x-content-type-options')).toBe('nosniff');
    expect(whole.headers.get('content-disposition')).toMatch(/^inline; filename="readme.txt"/);
    const etag = whole.headers.get('etag')!;
    const part = await fetch(`${base()}/files/${fileId}?alt=media`, {
      headers: { authorization: `Bearer ${token}`, range: 'bytes=10-19' },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-19/${bytes.length}`);
    expect(await part.text()).toBe(bytes.subarray(10, 20).toString());
    const tail = await fetch(`${base()}/files/${fileId}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/plain', range: 'bytes=-5' },
    });
    expect(tail.status).toBe(206);
    expect(await tail.text()).toBe(bytes.subarray(-5).toString());
    const outside = await fetch(`${base()}/files/${fileId}?alt=media`, {
      headers: { authorization: `Bearer ${token}`, range: `bytes=${bytes.length}-` },
    });
    expect(outside.status).toBe(416);
    expect(outside.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
    const cached = await fetch(`${base()}/files/${fileId}?alt=media`, {
      headers: { authorization: `Bearer ${token}`, 'if-none-match': etag },
    });
    expect(cached.status).toBe(304);
  });

  it('signs a link that works with no header, and refuses it tampered, expired or after a key rotation', async () => {
    const signed = await call('POST', `${base()}/files/${fileId}/sign`, { token, body: { expiresIn: 60 } });
    expect(signed.status).toBe(200);
    const url = new URL(signed.body.url);
    expect(url.pathname).toBe(`/storage/workspace/${ws}/api/v1/signed/files/${fileId}`);
    const opened = await fetch(signed.body.url);
    expect(opened.status).toBe(200);
    expect(Buffer.from(await opened.arrayBuffer())).toEqual(bytes);
    const sig = url.searchParams.get('signature')!;
    const tampered = new URL(url);
    tampered.searchParams.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    expect((await fetch(tampered)).status).toBe(403);
    const longer = new URL(url);
    longer.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    expect((await fetch(longer)).status).toBe(403);
    const expired = new URL(url);
    expired.searchParams.set('expires', String(Math.floor(Date.now() / 1000) - 10));
    expect((await fetch(expired)).status).toBe(403);
    const otherWorkspace = await fetch(signed.body.url.replace(`/workspace/${ws}/`, `/workspace/${otherWs}/`));
    expect(otherWorkspace.status).toBe(403);
    expect((await call('POST', `${base()}/files/${fileId}/sign`, { token, body: { expiresIn: 604801 } })).status).toBe(
      400,
    );
    const rotated = await call('POST', `${base()}/buckets/default/rotate-link-key`, { token });
    expect(rotated.status).toBe(200);
    const revoked = await fetch(signed.body.url);
    expect(revoked.status).toBe(403);
    expect(await revoked.json()).toEqual({
      error: expect.any(String),
      message: 'This link is invalid or has expired.',
      code: 'PERMISSION_DENIED',
      requestId: expect.any(String),
    });
  });

  it('never shows HTML inline, and finds HTML behind a lying image/png', async () => {
    const html = Buffer.from('<!doctype html><html><script>alert(1)</script></html>');
    const plain = await upload({ name: 'page.png' }, html, { type: 'image/png', filename: 'page.png' });
    expect(plain.status).toBe(201);
    expect(plain.body.contentType).toBe('text/html');
    const served = await fetch(`${base()}/files/${plain.body.id}?alt=media`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(served.headers.get('content-disposition')).toMatch(/^attachment;/);
    const refused = await upload({ bucket: 'images', name: 'evil.png' }, html, { type: 'image/png' });
    expect(refused.status).toBe(415);
    expect(refused.body.details).toEqual([{ field: 'file', message: expect.stringContaining('text/html') }]);
  });
});

describe('storage: refusals leave nothing behind', () => {
  it('refuses a file over the bucket limit with 413, keeping no row and no bytes', async () => {
    const before = await filesOnDisk();
    const res = await upload({ bucket: 'images', name: 'big.png' }, Buffer.concat([PNG, randomBytes(8000)]), {
      type: 'image/png',
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      details: [{ field: 'file', message: expect.any(String) }],
    });
    const listed = await call('GET', `${base()}/files?bucket=images&contains=big`, { token });
    expect(listed.body.results).toEqual([]);
    await eventually(async () => ((await filesOnDisk()).length === before.length ? true : undefined), 10_000, 50);
  });

  it('accepts an allowed image and lists it with folders, filters and a cursor', async () => {
    for (const name of ['2026/a.png', '2026/b.png', '2027/c.png', 'top.png']) {
      const res = await upload(
        { bucket: 'images', name, link: JSON.stringify({ collection: 'posts', recordId: randomUUID() }) },
        PNG,
        {
          type: 'image/png',
        },
      );
      expect(res.status).toBe(201);
      expect(res.body.contentType).toBe('image/png');
    }
    const folders = await call('GET', `${base()}/files?bucket=images&delimiter=/&includeCount=true`, { token });
    expect(folders.body.prefixes).toEqual(['2026/', '2027/']);
    expect(folders.body.results.map((f: { name: string }) => f.name)).toEqual(['top.png']);
    expect(folders.body.pagination.total).toBe(1);
    const inside = await call('GET', `${base()}/files?bucket=images&prefix=2026/&sort=name`, { token });
    expect(inside.body.results.map((f: { name: string }) => f.name)).toEqual(['2026/a.png', '2026/b.png']);
    const first = await call('GET', `${base()}/files?contentType=image/*&sort=name&limit=2`, { token });
    expect(first.body.pagination).toMatchObject({ hasMore: true, total: null });
    const second = await call(
      'GET',
      `${base()}/files?contentType=image/*&sort=name&limit=2&cursor=${first.body.pagination.nextCursor}`,
      {
        token,
      },
    );
    const names = [...first.body.results, ...second.body.results].map((f: { name: string }) => f.name);
    expect(names).toEqual(['2026/a.png', '2026/b.png', '2027/c.png', 'top.png']);
    expect(second.body.pagination.hasMore).toBe(false);
    const bad = await call('GET', `${base()}/files?sort=bogus&limit=2&contentType=nope`, { token });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['contentType', 'sort']);
  });

  it('refuses a name with .. and bad fields with one detail per field', async () => {
    const res = await upload(
      { name: '../escape.txt', visibility: 'secret', metadata: '[1]', link: '{"collection":"x"}' },
      Buffer.from('hi'),
    );
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'link',
      'metadata',
      'name',
      'visibility',
    ]);
    const missing = await upload({ name: 'a.txt' }, undefined);
    expect(missing.status).toBe(400);
    expect(missing.body.details).toEqual([{ field: 'file', message: expect.any(String) }]);
  });

  it('leaves nothing of a multipart body cut in the middle', async () => {
    const before = await filesOnDisk();
    const boundary = 'cutboundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\ncut.bin\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const url = new URL(`${base()}/upload`);
    await new Promise<void>((resolve) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': String(head.length + 1_000_000),
          },
        },
        (res) => {
          res.resume();
          res.on('end', resolve);
          res.on('error', () => resolve());
        },
      );
      req.on('error', () => resolve());
      req.write(head);
      req.write(randomBytes(300_000), () => setTimeout(() => req.destroy(), 200));
      req.on('close', () => resolve());
    });
    await eventually(
      async () => {
        const listed = await call('GET', `${base()}/files?contains=cut.bin`, { token });
        return listed.body.results.length === 0 && (await filesOnDisk()).length === before.length ? true : undefined;
      },
      10_000,
      50,
    );
  });

  it('answers a repeated Idempotency-Key with the first file, and 422 for another request', async () => {
    const headers = { 'idempotency-key': `k-${suffix}` };
    const first = await upload({ name: 'once.txt' }, Buffer.from('once'), { headers });
    expect(first.status).toBe(201);
    const again = await upload({ name: 'once.txt' }, Buffer.from('once'), { headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const other = await upload({ name: 'once.txt' }, Buffer.from('twice'), { headers });
    expect(other.status).toBe(422);
    const listed = await call('GET', `${base()}/files?contains=once.txt`, { token });
    expect(listed.body.results).toHaveLength(1);
  });
});

describe('storage: deletes, isolation and permissions', () => {
  it('deletes a file: 404 at once, its bytes purged in the background', async () => {
    const res = await upload({ name: 'doomed.txt' }, Buffer.from('bye'));
    expect(res.status).toBe(201);
    expect(await onDisk(res.body.id)).toBe(true);
    expect((await call('DELETE', `${base()}/files/${res.body.id}`, { token })).status).toBe(204);
    expect((await call('GET', `${base()}/files/${res.body.id}`, { token })).status).toBe(404);
    expect((await call('DELETE', `${base()}/files/${res.body.id}`, { token })).status).toBe(404);
    await eventually(async () => ((await onDisk(res.body.id)) ? undefined : true), 10_000, 50);
  });

  it('answers 404 for a file of another workspace', async () => {
    const mine = await upload({ name: 'mine.txt' }, Buffer.from('mine'));
    const other = await call('GET', `${base(otherWs)}/files/${mine.body.id}`, { token: otherToken });
    expect(other.status).toBe(404);
    expect((await call('DELETE', `${base(otherWs)}/files/${mine.body.id}`, { token: otherToken })).status).toBe(404);
    expect(
      (await call('POST', `${base(otherWs)}/files/${mine.body.id}/sign`, { token: otherToken, body: {} })).status,
    ).toBe(404);
  });

  it('refuses a caller without the files permission with 403', async () => {
    const reader = await serviceAccountToken(stack, ws, token, {
      name: `reader-${suffix}`,
      resource: 'files',
      actions: ['list', 'retrieve'],
    });
    expect((await call('GET', `${base()}/files`, { token: reader })).status).toBe(200);
    const refused = await upload({ name: 'nope.txt' }, Buffer.from('nope'), { token: reader });
    expect(refused.status).toBe(403);
    expect((await call('POST', `${base()}/buckets`, { token: reader, body: { name: 'x' } })).status).toBe(403);
    const none = await serviceAccountToken(stack, ws, token, {
      name: `none-${suffix}`,
      resource: 'records',
      actions: ['list'],
    });
    expect((await call('GET', `${base()}/files`, { token: none })).status).toBe(403);
    expect((await call('GET', `${base()}/buckets`, { token: none })).status).toBe(403);
  });

  it('manages buckets: default listed, settings updated, bad settings refused per field', async () => {
    const listed = await call('GET', `${base()}/buckets`, { token });
    expect(listed.body.results.map((b: { name: string }) => b.name)).toEqual(['default', 'images']);
    const updated = await call('PATCH', `${base()}/buckets/images`, {
      token,
      body: { allowedTypes: ['image/*', 'application/pdf'] },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      name: 'images',
      maxFileBytes: 4096,
      allowedTypes: ['image/*', 'application/pdf'],
    });
    expect(updated.body.linkKey).toBeUndefined();
    const bad = await call('POST', `${base()}/buckets`, {
      token,
      body: { name: 'Bad Name', maxFileBytes: 0, allowedTypes: ['*'], defaultVisibility: 'open' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'allowedTypes',
      'defaultVisibility',
      'maxFileBytes',
      'name',
    ]);
    expect((await call('POST', `${base()}/buckets`, { token, body: { name: 'images' } })).status).toBe(409);
    expect((await call('GET', `${base()}/buckets/missing`, { token })).status).toBe(404);
  });
});
