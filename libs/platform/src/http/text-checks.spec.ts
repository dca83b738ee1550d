import { describe, expect, it } from '@jest/globals';
import {
  findFormTextProblems,
  findJsonProblems,
  findPathProblems,
  MAX_JSON_DEPTH,
  printable,
  textProblem,
} from './text-checks.js';

/** `{"a":{"a":…{"a":1}…}}` nested `depth` levels (the outer object is level 1), as JSON text. */
function nestedObject(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

describe('textProblem', () => {
  it('accepts text PostgreSQL can store, refuses NUL and lone surrogates', () => {
    expect(textProblem('plain, accented é, emoji 😀')).toBeUndefined();
    expect(textProblem('a\u0000b')).toMatch(/NUL/);
    expect(textProblem('a\ud800b')).toMatch(/lone UTF-16 surrogate/);
    expect(textProblem('a\udc00')).toMatch(/lone UTF-16 surrogate/);
    expect(textProblem('\ud83d\ude00')).toBeUndefined();
  });
});

describe('findJsonProblems (on the raw text, before parsing)', () => {
  it('accepts a body nested exactly to the limit and refuses one level more, naming where', () => {
    expect(findJsonProblems(nestedObject(MAX_JSON_DEPTH))).toEqual([]);
    const [problem, ...rest] = findJsonProblems(nestedObject(MAX_JSON_DEPTH + 1));
    expect(rest).toEqual([]);
    expect(problem!.field).toBe(Array.from({ length: MAX_JSON_DEPTH }, () => 'a').join('.'));
    expect(problem!.message).toMatch(/deeper than 64 levels/);
    expect(findJsonProblems('{"x":[1,{"y":[[2]]}]}', 4)).toEqual([
      { field: 'x[1].y[0]', message: expect.stringMatching(/deeper than 4 levels/) },
    ]);
  });

  it('checks 100,000 levels of nesting without overflowing its own stack', () => {
    const depth = 100_000;
    expect(findJsonProblems(`${'['.repeat(depth)}${']'.repeat(depth)}`)).toEqual([
      { field: '[0]'.repeat(MAX_JSON_DEPTH), message: expect.stringMatching(/deeper than/) },
    ]);
    expect(findJsonProblems(nestedObject(depth))).toHaveLength(1);
  });

  it('names every string and key whose escapes encode NUL or a lone surrogate, as the validation pipe names fields', () => {
    const body =
      '{"data":{"name":"x\\u0000y","tags":["ok","\\ud800"],"k\\u0000":1,"deep":{"list":[{"v":"\\uDFFF"}]}},"ok":"fine"}';
    expect(findJsonProblems(body)).toEqual([
      { field: 'data.name', message: 'must not contain the NUL character (\\u0000)' },
      { field: 'data.tags[1]', message: 'must not contain a lone UTF-16 surrogate' },
      { field: 'data.k\\u0000', message: 'key must not contain the NUL character (\\u0000)' },
      { field: 'data.deep.list[0].v', message: 'must not contain a lone UTF-16 surrogate' },
    ]);
    expect(findJsonProblems('{"a":"\\ud83d\\u0041"}')).toEqual([
      { field: 'a', message: 'must not contain a lone UTF-16 surrogate' },
    ]);
    expect(findJsonProblems('["\\udc00\\ud800"]')).toHaveLength(1);
  });

  it('passes ordinary bodies, escaped pairs, escaped quotes and backslashes untouched', () => {
    expect(findJsonProblems('{"a":[1,"two",null,true,{"b":"c"}],"é":"\\ud83d\\ude00 \\u00e9"}')).toEqual([]);
    expect(findJsonProblems('{"q":"a \\"quoted\\" \\\\u0000 text","[{":"}]"}')).toEqual([]);
    expect(findJsonProblems('{"k\\"ey":{"x":"\\u0000"}}')).toEqual([
      { field: 'k"ey.x', message: 'must not contain the NUL character (\\u0000)' },
    ]);
  });

  it('scans text that is not JSON without failing (the parser refuses it afterwards)', () => {
    for (const junk of ['', '{', '"unterminated', '{"a":"\\u00', ']]]}}}', '\\', '{"a"::,,]']) {
      expect(() => findJsonProblems(junk)).not.toThrow();
    }
  });

  it('lists at most 100 problems', () => {
    expect(findJsonProblems(JSON.stringify(Array.from({ length: 500 }, () => '\u0000')))).toHaveLength(100);
  });
});

describe('findFormTextProblems (query strings and form bodies)', () => {
  it('names the parameter whose value is NUL, malformed, or not UTF-8', () => {
    expect(findFormTextProblems('filter=name:%00&limit=5')).toEqual([
      { field: 'filter', message: 'must not contain the NUL character (%00)' },
    ]);
    expect(findFormTextProblems('search=%zz')).toEqual([
      { field: 'search', message: 'is not valid percent-encoded UTF-8' },
    ]);
    expect(findFormTextProblems('search=%ff')).toEqual([
      { field: 'search', message: 'is not valid percent-encoded UTF-8' },
    ]);
    // A UTF-16 surrogate cannot be percent-encoded as UTF-8: its three bytes are refused.
    expect(findFormTextProblems('q=%ED%A0%80')).toEqual([
      { field: 'q', message: 'is not valid percent-encoded UTF-8' },
    ]);
    expect(findFormTextProblems('a%00b=1')).toEqual([
      { field: 'a\\u0000b', message: 'parameter name must not contain the NUL character (%00)' },
    ]);
  });

  it('accepts well-formed text, plus signs and empty values', () => {
    expect(findFormTextProblems('')).toEqual([]);
    expect(findFormTextProblems('a=1&b=&c&d=x+y%20z%C3%A9&&e=%E2%82%AC')).toEqual([]);
  });
});

describe('findPathProblems', () => {
  it('refuses a segment that does not decode, leaving NUL to the route guard', () => {
    expect(findPathProblems('/structures/slug/%zz')).toEqual([
      { field: 'path', message: "segment '%zz' is not valid percent-encoded UTF-8" },
    ]);
    expect(findPathProblems('/structures/slug/%ED%A0%80')).toHaveLength(1);
    expect(findPathProblems('/structures/slug/%00')).toEqual([]);
    expect(findPathProblems('/structures/slug/caf%C3%A9')).toEqual([]);
  });
});

describe('printable', () => {
  it('escapes NUL, replaces lone surrogates and cuts long text', () => {
    expect(printable('a\u0000b')).toBe('a\\u0000b');
    expect(printable('a\ud800')).toBe('a\ufffd');
    expect(printable('x'.repeat(100))).toBe(`${'x'.repeat(64)}…`);
  });
});
