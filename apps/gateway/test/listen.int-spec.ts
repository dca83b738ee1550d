import { createServer, type Server } from 'node:net';
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
});
