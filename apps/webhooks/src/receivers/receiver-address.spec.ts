import { describe, expect, it } from '@jest/globals';
import { isPrivateAddress, refusedReceiver } from './receiver-address.js';

describe('receiver addresses', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::FFFF:10.0.0.1',
  ])('%s is private', (ip) => expect(isPrivateAddress(ip)).toBe(true));

  it.each([
    '8.8.8.8',
    '172.32.0.1',
    '192.169.0.1',
    '100.128.0.1',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    'example.com',
  ])('%s is not', (ip) => expect(isPrivateAddress(ip)).toBe(false));

  it('refuses localhost and literal private hosts in URLs, and lets names through to the delivery-time check', () => {
    for (const url of [
      'http://localhost:3000/x',
      'http://api.localhost/x',
      'http://127.0.0.1/x',
      'http://[::1]:8080/x',
      'https://169.254.169.254/latest',
    ])
      expect({ url, refused: refusedReceiver(url) }).toEqual({ url, refused: expect.stringContaining('private') });
    for (const url of ['https://hooks.example.com/in', 'http://8.8.8.8/in', 'http://receiver.internal/in'])
      expect(refusedReceiver(url)).toBeUndefined();
  });
});
