import { connect, createServer, type Server } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import express from 'express';
import { freePort } from '@strata/testing';
import { listen } from '../src/create-gateway.js';

describe('the gateway listening', () => {
  it('rejects with EADDRINUSE when its port is taken, instead of waiting forever', async () => {
    const port = await freePort();
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
    try {
      await expect(listen(express(), port, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
    const server = await listen(express(), port, '127.0.0.1');
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('answers a request over the parser limits in the general error shape, not a bare status line', async () => {
    const port = await freePort();
    const server = await listen(express(), port, '127.0.0.1');
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(request));
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
    try {
      const long = await raw(`GET /x?q=${'a'.repeat(30_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      expect(long.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
      expect(JSON.parse(long.slice(long.indexOf('\r\n\r\n') + 4))).toMatchObject({
        error: 'Request Header Fields Too Large',
        code: 'VALIDATION_ERROR',
        message: 'The request line and headers together are larger than 16 KiB.',
      });
      const garbled = await raw('NOT HTTP\r\n\r\n');
      expect(garbled.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
      expect(JSON.parse(garbled.slice(garbled.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'VALIDATION_ERROR' });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
