import { describe, expect, it } from 'vitest';
import { redactedUrl } from './redacted-url';

describe('redactedUrl', () => {
  it('hides stream tickets and keys put in the query, keeping the rest as sent', () => {
    expect(redactedUrl('/v1/tabs/t1/events?after=3&ticket=eyJhbGciOi.abc')).toBe(
      '/v1/tabs/t1/events?after=3&ticket=[redacted]',
    );
    expect(redactedUrl('/v1/tabs?api_key=ck_secret&limit=5')).toBe(
      '/v1/tabs?api_key=[redacted]&limit=5',
    );
    expect(redactedUrl('/v1/tabs?Access-Token=abc&KEY=x&apiKey=y&token=z')).toBe(
      '/v1/tabs?Access-Token=[redacted]&KEY=[redacted]&apiKey=[redacted]&token=[redacted]',
    );
  });

  it('finds names written with percent escapes, and leaves other parameters alone', () => {
    expect(redactedUrl('/x?tick%65t=secret&cursor=abc%3D')).toBe(
      '/x?tick%65t=[redacted]&cursor=abc%3D',
    );
    expect(redactedUrl('/x?keyword=kept&monkey=kept')).toBe('/x?keyword=kept&monkey=kept');
  });

  it('leaves a URL without a query unchanged', () => {
    expect(redactedUrl('/v1/tabs/t1/chunks')).toBe('/v1/tabs/t1/chunks');
    expect(redactedUrl('/v1/tabs?')).toBe('/v1/tabs?');
  });
});
