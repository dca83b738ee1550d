import { describe, expect, it } from '@jest/globals';
import { contentDisposition, safeInline } from './disposition.js';

describe('contentDisposition', () => {
  it('shows pixels, media and plain text inline', () => {
    expect(contentDisposition('a/cat.png', 'image/png')).toBe(`inline; filename="cat.png"; filename*=UTF-8''cat.png`);
    expect(safeInline('text/plain; charset=utf-8')).toBe(true);
  });

  it('never shows HTML, SVG or unknown bytes inline', () => {
    for (const t of ['text/html', 'image/svg+xml', 'application/xhtml+xml', 'application/octet-stream', 'text/xml']) {
      expect(contentDisposition('x', t)).toMatch(/^attachment;/);
    }
  });

  it('encodes names safely', () => {
    expect(contentDisposition('résumé "v2".pdf', 'application/pdf')).toBe(
      `attachment; filename="r_sum_ _v2_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22v2%22.pdf`,
    );
    expect(contentDisposition('a.png', 'image/png', true)).toMatch(/^attachment;/);
  });
});
