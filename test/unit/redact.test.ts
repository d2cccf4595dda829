import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createContext, type Context } from '../../src/context.js';
import { createIO } from '../../src/terminal/io.js';
import { KnownSecrets, REDACTED, redactBody, redactForm, redactHeaderValue, redactJson, redactUrl } from '../../src/redact.js';

describe('redactUrl', () => {
  it('replaces the value of every secret query parameter with the marker, keeping the others', () => {
    for (const name of ['code', 'code_verifier', 'refresh_token', 'access_token', 'id_token', 'client_secret', 'token']) {
      const out = redactUrl(`https://as.example/cb?${name}=s3cr3t-value&state=abc`);
      expect(out, name).toBe(`https://as.example/cb?${name}=${REDACTED}&state=abc`);
    }
  });

  it('matches secret parameter names case-insensitively and after percent-decoding', () => {
    const out = redactUrl('https://as.example/cb?Code=aaa111&access%5Ftoken=bbb222');
    expect(out).not.toContain('aaa111');
    expect(out).not.toContain('bbb222');
    const repeated = redactUrl('https://as.example/cb?code=first111&code=second222');
    expect(repeated).not.toContain('first111');
    expect(repeated).not.toContain('second222');
  });

  it('replaces user name and password in the authority', () => {
    const out = redactUrl('https://alice:hunter2@api.example/x');
    expect(out).not.toContain('alice');
    expect(out).not.toContain('hunter2');
    expect(out).toBe(`https://${REDACTED}:${REDACTED}@api.example/x`);
    expect(redactUrl('https://alice@api.example/')).toBe(`https://${REDACTED}@api.example/`);
  });

  it('leaves a URL without secrets byte for byte as the URL parser prints it', () => {
    const url = 'https://api.example/api/courses?q=a%20b&limit=5&state=xyz#frag';
    expect(redactUrl(url)).toBe(url);
  });

  it('keeps non-secret parameters and their values when a secret is redacted', () => {
    const out = new URL(redactUrl('https://api.example/cb?iss=https%3A%2F%2Fas.example&code=zzz&state=s1'));
    expect(out.searchParams.get('iss')).toBe('https://as.example');
    expect(out.searchParams.get('state')).toBe('s1');
    expect(out.searchParams.get('code')).toBe(REDACTED);
  });

  it('does not treat parameters that merely contain a secret name as secret', () => {
    const out = redactUrl('https://api.example/x?code_challenge=abc123&tokens=7');
    expect(out).toContain('code_challenge=abc123');
    expect(out).toContain('tokens=7');
  });

  it('accepts a URL object, and returns unparseable input unchanged instead of throwing', () => {
    expect(redactUrl(new URL('https://as.example/?refresh_token=rt-9'))).toBe(`https://as.example/?refresh_token=${REDACTED}`);
    expect(redactUrl('/relative/path?code=1')).toBe('/relative/path?code=1');
    expect(redactUrl('not a url')).toBe('not a url');
  });
});

describe('redactHeaderValue', () => {
  it('keeps only the scheme of Authorization and Proxy-Authorization, whatever the name case', () => {
    expect(redactHeaderValue('Authorization', 'Bearer eyJhbGciOi.payload.sig')).toBe(`Bearer ${REDACTED}`);
    expect(redactHeaderValue('authorization', 'Basic dXNlcjpwYXNz')).toBe(`Basic ${REDACTED}`);
    expect(redactHeaderValue('AUTHORIZATION', 'Bearer t')).toBe(`Bearer ${REDACTED}`);
    expect(redactHeaderValue('Proxy-Authorization', 'Basic abc')).toBe(`Basic ${REDACTED}`);
  });

  it('redacts an Authorization value that has no scheme entirely', () => {
    expect(redactHeaderValue('Authorization', 'rawtoken123')).toBe(REDACTED);
    expect(redactHeaderValue('Authorization', ' leadingspace')).toBe(REDACTED);
  });

  it('redacts cookie and set-cookie values entirely', () => {
    expect(redactHeaderValue('Cookie', 'sid=abc; other=def')).toBe(REDACTED);
    expect(redactHeaderValue('set-cookie', '_session=xyz; HttpOnly; Secure')).toBe(REDACTED);
  });

  it('leaves other headers untouched', () => {
    expect(redactHeaderValue('Content-Type', 'application/json')).toBe('application/json');
    expect(redactHeaderValue('WWW-Authenticate', 'Bearer error="invalid_token"')).toBe('Bearer error="invalid_token"');
  });
});

describe('redactForm', () => {
  it('redacts secret fields of a token request and keeps the others', () => {
    const out = new URLSearchParams(
      redactForm('grant_type=authorization_code&code=C0DE&code_verifier=V3R&client_id=cli&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback'),
    );
    expect(out.get('code')).toBe(REDACTED);
    expect(out.get('code_verifier')).toBe(REDACTED);
    expect(out.get('grant_type')).toBe('authorization_code');
    expect(out.get('client_id')).toBe('cli');
    expect(out.get('redirect_uri')).toBe('http://127.0.0.1:1/callback');
    // the marker is written readably, not percent-encoded
    expect(redactForm('refresh_token=abc')).toBe(`refresh_token=${REDACTED}`);
  });
});

describe('redactJson', () => {
  it('redacts secret keys at any depth, in objects and arrays', () => {
    const out = redactJson({
      access_token: 'AT',
      token_type: 'Bearer',
      nested: { refresh_token: 'RT', keep: 'yes' },
      list: [{ id_token: 'IT' }, 'plain', 3],
    });
    expect(out).toEqual({
      access_token: REDACTED,
      token_type: 'Bearer',
      nested: { refresh_token: REDACTED, keep: 'yes' },
      list: [{ id_token: REDACTED }, 'plain', 3],
    });
    expect(redactJson(null)).toBeNull();
    expect(redactJson('code')).toBe('code');
  });

  it('replaces a secret key whose value is an object as a whole', () => {
    expect(redactJson({ client_secret: { value: 'x' } })).toEqual({ client_secret: REDACTED });
  });

  it('does not let a __proto__ key hide a secret', () => {
    const parsed = JSON.parse('{"__proto__":{"access_token":"hidden-AT"}}');
    expect(JSON.stringify(redactJson(parsed))).not.toContain('hidden-AT');
  });
});

describe('redactBody', () => {
  it('redacts a form body by its content type (with parameters)', () => {
    expect(redactBody('token=abc&token_type_hint=refresh_token', 'application/x-www-form-urlencoded;charset=UTF-8')).toBe(
      `token=${REDACTED}&token_type_hint=refresh_token`,
    );
  });

  it('redacts a JSON body, including +json types', () => {
    expect(JSON.parse(redactBody('{"access_token":"AT","expires_in":3600}', 'application/json; charset=utf-8'))).toEqual({
      access_token: REDACTED,
      expires_in: 3600,
    });
    expect(redactBody('{"id_token":"x"}', 'application/vnd.api+json')).toBe(`{"id_token":"${REDACTED}"}`);
  });

  it('summarises invalid JSON without echoing it', () => {
    const out = redactBody('{"access_token":"AT-leak', 'application/json');
    expect(out).not.toContain('AT-leak');
    expect(out).toMatch(/unparseable JSON/);
  });

  it('summarises any other content type by its size in bytes only', () => {
    expect(redactBody('<html>code=abc</html>', 'text/html')).toBe('<21 bytes>');
    expect(redactBody('é', 'text/plain')).toBe('<2 bytes>');
    expect(redactBody('access_token=x', null)).toBe('<14 bytes>');
    expect(redactBody('access_token=x', undefined)).toBe('<14 bytes>');
  });
});

describe('redactUrl, found by review', () => {
  it('redacts secrets in the fragment', () => {
    const out = redactUrl('https://x.example/cb#access_token=SECRET&state=1');
    expect(out).not.toContain('SECRET');
    expect(out).toContain('state=1');
  });
});

describe('KnownSecrets', () => {
  it('scrubs every value it was given from a text, and ignores values too short to be secrets', () => {
    const secrets = new KnownSecrets();
    secrets.remember('access-token-1', undefined, null, 'short', 'refresh-token-1');
    expect(secrets.scrub('got access-token-1 and refresh-token-1, twice: access-token-1; short stays')).toBe(
      `got ${REDACTED} and ${REDACTED}, twice: ${REDACTED}; short stays`,
    );
    expect(secrets.size).toBe(2);
  });

  /** A context as main.ts builds one: its IO scrubs with the context's own set. */
  function context(): { ctx: Context; stderr: () => string } {
    const stderr = new PassThrough();
    const io = createIO({ stdout: new PassThrough(), stderr, stdin: new PassThrough(), env: {} });
    const ctx = createContext({ env: {}, io, globals: { profile: 'default', json: false, verbose: false }, version: '0', signal: new AbortController().signal, configDir: '/nonexistent' });
    return { ctx, stderr: () => String(stderr.read() ?? '') };
  }

  it("two contexts do not share secrets: what one remembers only its own output is scrubbed of", () => {
    const a = context();
    const b = context();
    a.ctx.secrets.remember('token-of-context-a');
    a.ctx.io.err('a says token-of-context-a');
    b.ctx.io.err('b says token-of-context-a');
    expect(a.stderr()).toBe(`a says ${REDACTED}\n`);
    expect(b.stderr()).toBe('b says token-of-context-a\n');
    expect(b.ctx.secrets.size).toBe(0);
  });

  it('holds at most CAPACITY values, forgetting the least recently remembered first', () => {
    const secrets = new KnownSecrets();
    const value = (i: number) => `spent-token-${String(i).padStart(4, '0')}`;
    for (let i = 0; i < KnownSecrets.CAPACITY * 10; i++) secrets.remember(value(i));
    expect(secrets.size).toBe(KnownSecrets.CAPACITY);
    const last = KnownSecrets.CAPACITY * 10 - 1;
    expect(secrets.scrub(value(last))).toBe(REDACTED);
    expect(secrets.scrub(value(last - KnownSecrets.CAPACITY + 1))).toBe(REDACTED);
    expect(secrets.scrub(value(last - KnownSecrets.CAPACITY))).toBe(value(last - KnownSecrets.CAPACITY));
    expect(secrets.scrub(value(0))).toBe(value(0));
  });

  it('keeps a value remembered again (the current session, loaded at every use) however many others come and go', () => {
    const secrets = new KnownSecrets();
    secrets.remember('the-current-token');
    for (let i = 0; i < KnownSecrets.CAPACITY * 10; i++) {
      secrets.remember(`refreshed-token-${i}`);
      if (i % (KnownSecrets.CAPACITY - 1) === 0) secrets.remember('the-current-token');
    }
    expect(secrets.size).toBe(KnownSecrets.CAPACITY);
    expect(secrets.scrub('the-current-token')).toBe(REDACTED);
  });

  describe('every form a token takes in what a server wrote', () => {
    // A VSCHAR token with the characters JSON and URLs escape: a slash, a quote, a backslash.
    const token = 'eyJhbGc.iOi/JSUz"I1\\NiJ9-token';
    const secrets = new KnownSecrets();
    secrets.remember(token);
    /** JSON-escaped as \uXXXX: `pick` says which characters, in the case `upper` says. */
    const unicode = (text: string, pick: (i: number) => boolean, upper = false) =>
      [...text].map((c, i) => (pick(i) ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')[upper ? 'toUpperCase' : 'toLowerCase']()}` : c)).join('');

    it.each([
      ['raw', `say ${token} twice ${token}`],
      ['as JSON writes it', JSON.stringify({ echo: token })],
      ['every character \\u-escaped', unicode(token, () => true)],
      ['a mix of escaped and plain characters, upper-case hex', unicode(token, (i) => i % 3 === 0, true)],
      ['with \\/ as PHP writes a slash', JSON.stringify(token).replaceAll('/', '\\/')],
      ['percent-encoded', `?echo=${encodeURIComponent(token)}`],
      ['percent-encoded in lower-case hex, every character', [...token].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')],
    ])('%s', (_name, text) => {
      const scrubbed = secrets.scrub(text);
      expect(scrubbed).toContain(REDACTED);
      // Decoded every way it could be, what is left holds no token.
      const decoded = decodeURIComponent(scrubbed.replace(/\\u([0-9a-f]{4})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))).replaceAll('\\/', '/').replaceAll('\\"', '"').replaceAll('\\\\', '\\'));
      expect(decoded).not.toContain(token);
    });

    it('a spelling whose first characters look like the end of an escape before it (%4 then 1abc…) is still caught', () => {
      const hex = new KnownSecrets();
      hex.remember('1abcdef0-token');
      // Read as JSON, "%41abc\u0064ef0-token" is "%41abcdef0-token": the secret, after a "%4".
      const scrubbed = hex.scrub('"%41abc\\u0064ef0-token"');
      expect(JSON.parse(scrubbed)).toBe(`%4${REDACTED}`);
    });

    it('the same letters in another case are another value, left alone', () => {
      expect(secrets.scrub(token.toUpperCase())).toBe(token.toUpperCase());
    });

    it('a parsed value: every string and key, at any depth (deeper than the stack), in a copy', () => {
      const value = { [token]: [1, null, { note: `pre ${token}` }], plain: 'kept' };
      expect(secrets.scrubValue(value)).toEqual({ [REDACTED]: [1, null, { note: `pre ${REDACTED}` }], plain: 'kept' });
      // A string that holds an escaped spelling as text (a text body, a JSON string quoting JSON) is scrubbed too.
      expect(secrets.scrubValue({ quoted: JSON.stringify(token).replaceAll('/', '\\/'), percent: encodeURIComponent(token) })).toEqual({ quoted: `"${REDACTED}"`, percent: REDACTED });
      expect(secrets.scrubValue(`echo ${token.replaceAll('/', '\\/')}`)).toBe(`echo ${REDACTED}`);
      expect(value.plain).toBe('kept');
      expect(Object.keys(value)).toEqual([token, 'plain']);
      let deep: unknown = token;
      for (let i = 0; i < 100_000; i++) deep = [deep];
      let out = secrets.scrubValue(deep);
      for (let i = 0; i < 100_000; i++) out = (out as unknown[])[0];
      expect(out).toBe(REDACTED);
    });
  });
});

describe('KnownSecrets.scrub: a secret cut short', () => {
  it('redacts the start of a known secret that a text cut at a length ends with (sanitize adds …)', () => {
    const secrets = new KnownSecrets();
    secrets.remember('tok_0123456789abcdefghijklmnop');
    expect(secrets.scrub('refused: the refresh token tok_0123456789ab…')).toBe('refused: the refresh token [redacted]…');
    // Fewer than 8 characters of it, or text that is not its start, is left as it is.
    expect(secrets.scrub('cut at tok_012…')).toBe('cut at tok_012…');
    expect(secrets.scrub('cut at 0123456789ab…')).toBe('cut at 0123456789ab…');
  });
});
