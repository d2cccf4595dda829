/**
 * Content codings across the proxy. The masker (scrub.ts) reads bytes as the client will read them, so an answer
 * in a content coding is decoded in the proxy and passed on as identity: a client that could gunzip (or inflate,
 * or un-brotli) a reflected token never gets the compressed bytes. The platform is offered only the codings the
 * proxy can decode, so one it cannot (zstd, compress) is never asked for; an answer that comes in one all the same
 * is refused in the proxy's name, never passed on unscanned.
 */
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Transform } from 'node:stream';

const DECODERS: Record<string, () => Transform> = {
  // Strict (no finishFlush): a compressed body cut short fails, and the client's connection is closed with it.
  gzip: () => createGunzip(),
  'x-gzip': () => createGunzip(),
  deflate: () => createInflate(),
  br: () => createBrotliDecompress(),
};

/**
 * The Accept-Encoding to send the platform: the client's list less what the proxy cannot decode, or `identity`
 * when nothing is left or the client named none (no header means "any coding" to a server).
 */
export function acceptEncodingUpstream(given: string | undefined): string {
  if (!given) return 'identity';
  const kept: string[] = [];
  for (const part of given.split(',')) {
    const coding = part.split(';', 1)[0]!.trim().toLowerCase();
    if (/;\s*q\s*=\s*0(\.0*)?\s*$/i.test(part)) continue;
    if (coding === '*') {
      kept.push('gzip', 'deflate', 'br');
      continue;
    }
    if (coding in DECODERS) kept.push(part.trim());
  }
  return kept.length ? [...new Set(kept)].join(', ') : 'identity';
}

/**
 * The decoders for an answer's Content-Encoding, in the order to apply them (the last coding applied first
 * undone); [] for identity; undefined when a coding is one the proxy cannot decode.
 */
export function decodersFor(contentEncoding: string | string[] | undefined): Transform[] | undefined {
  const value = Array.isArray(contentEncoding) ? contentEncoding.join(',') : contentEncoding;
  if (!value) return [];
  const codings = value
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== 'identity');
  if (!codings.every((c) => c in DECODERS)) return undefined;
  return codings.reverse().map((c) => DECODERS[c]!());
}
