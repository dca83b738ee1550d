import { describe, expect, it } from '@jest/globals';
import { PRIVATE_RECEIVERS_HINT, refusedReceiver } from './receiver-address.js';

describe('receiver addresses', () => {
  it.each([
    'http://localhost:3000/x',
    'http://api.localhost/x',
    'http://localhost./x',
    'http://127.0.0.1/x',
    'http://0x7f.1/',
    'http://2130706433/',
    'http://[::1]:8080/x',
    'http://[::7f00:1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[64:ff9b:1::a00:1]/',
    'http://[2002:7f00:1::]/',
    'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    'http://[2001:db8::1]/',
    'http://[3fff::1]/',
    'http://192.0.2.10/',
    'http://198.51.100.10/',
    'http://203.0.113.10/',
    'https://169.254.169.254/latest',
    'http://[fd00::1]/',
  ])('refuses %s, naming the setting that allows it', (url) => {
    expect(refusedReceiver(url, false)).toMatch(
      new RegExp(`^(points to a non-public address|names \\S+, a loopback name).* \\(${PRIVATE_RECEIVERS_HINT}\\)$`),
    );
    expect(refusedReceiver(url, true)).toBeUndefined();
  });

  it('lets public addresses and names through to the delivery-time check', () => {
    for (const url of [
      'https://hooks.example.com/in',
      'http://8.8.8.8/in',
      'http://receiver.internal/in',
      'http://[2001:4860:4860::8888]/',
      'http://[64:ff9b::8.8.8.8]/',
    ])
      expect(refusedReceiver(url, false)).toBeUndefined();
  });

  it('refuses what is not an http(s) URL without the hint, whatever the setting', () => {
    for (const allowPrivate of [false, true]) {
      expect(refusedReceiver('ftp://example.com/x', allowPrivate)).toBe('must be an http or https URL');
      expect(refusedReceiver('not a url', allowPrivate)).toBe('is not an absolute URL');
    }
  });
});
