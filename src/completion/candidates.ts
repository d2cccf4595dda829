/**
 * The dynamic values the completion scripts ask for (`plat __complete <kind>`), read from what is already on
 * this machine — profiles, the discovery cache, the cached API index — never from the network: a Tab press must
 * be instant and work offline. One candidate per line, a tab and a description after it where there is one.
 */
import { readdir } from 'node:fs/promises';
import { describeScope, SPEC_SCOPE_NAMES } from '../catalogue/scopes.js';
import { readCachedFullIndex, readCachedIndex } from '../catalogue/openapi.js';
import type { Context } from '../context.js';
import { cachedDiscovery, currentProfile, platformOf } from '../session/index.js';
import { profilesDir, validateProfileName } from '../store/paths.js';
import { sanitize } from '../terminal/text.js';

export type CandidateKind = 'scopes' | 'profiles' | 'paths' | 'base-urls' | 'operations' | 'op-flags' | 'op-values';
/**
 * `operations`: operationIds; `op-flags <operationId>`: that operation's parameters as `--<name>` flags;
 * `op-values <operationId> <name>`: the values a parameter's enum allows (or its default, or true/false).
 */
export const CANDIDATE_KINDS: readonly CandidateKind[] = ['scopes', 'profiles', 'paths', 'base-urls', 'operations', 'op-flags', 'op-values'];

export interface Candidate {
  value: string;
  description?: string;
}

/**
 * Values come from files a server filled (metadata, an API description): only characters that are inert in every
 * shell's command line pass, so completing a value can never insert `$(…)` or `;` into the user's command.
 */
const SAFE = /^[A-Za-z0-9_.~:/@%+={}-]+$/;
const clean = (text: string | undefined) => (text === undefined ? undefined : sanitize(text, 80) || undefined);

async function profileNames(ctx: Context): Promise<string[]> {
  try {
    const entries = await readdir(profilesDir(ctx.configDir));
    return entries
      .filter((e) => e.endsWith('.json'))
      .map((e) => e.slice(0, -5))
      .filter((name) => {
        try {
          validateProfileName(name);
          return true;
        } catch {
          return false;
        }
      })
      .sort();
  } catch {
    return [];
  }
}

async function cachedIndex(ctx: Context) {
  const baseUrl = platformOf(ctx, await currentProfile(ctx));
  return baseUrl ? await readCachedIndex(ctx.configDir, baseUrl, ctx.now(), Infinity) : undefined;
}

export async function candidates(ctx: Context, kind: CandidateKind, words: string[] = []): Promise<Candidate[]> {
  switch (kind) {
    case 'operations': {
      const index = await cachedIndex(ctx);
      return (index?.operations ?? [])
        .filter((op) => op.operationId)
        .map((op) => ({ value: op.operationId!, description: [op.method, op.path, op.summary].filter(Boolean).join(' ') }));
    }
    case 'op-flags':
    case 'op-values': {
      const [id, name] = words;
      const baseUrl = platformOf(ctx, await currentProfile(ctx));
      const full = baseUrl ? await readCachedFullIndex(ctx.configDir, baseUrl, ctx.now(), Infinity) : undefined;
      const op = full?.operations.find((o) => o.operationId === id);
      if (!op) return [];
      if (kind === 'op-flags') {
        return op.parameters.map((p) => ({ value: `--${p.name}`, description: [p.required ? 'required' : '', p.description].filter(Boolean).join(': ') }));
      }
      const param = op.parameters.find((p) => p.name === name?.replace(/^--/, ''));
      if (!param) return [];
      const schema = param.schema;
      const values = Array.isArray(schema.enum) ? schema.enum : schema.type === 'boolean' ? [true, false] : schema.default !== undefined ? [schema.default] : [];
      return values.filter((v) => typeof v !== 'object').map((v) => ({ value: String(v) }));
    }
    case 'profiles':
      return (await profileNames(ctx)).map((value) => ({ value }));
    case 'base-urls': {
      const profiles = await ctx.profiles();
      const urls = (await profiles.scan()).profiles.map((p) => p.baseUrl).filter((u): u is string => Boolean(u));
      return [...new Set(urls)].map((value) => ({ value }));
    }
    case 'scopes': {
      const baseUrl = platformOf(ctx, await currentProfile(ctx, { mayBeNew: true }));
      const cached = baseUrl ? await cachedDiscovery(ctx, baseUrl) : undefined;
      const listed = cached?.as.scopes_supported;
      const names = Array.isArray(listed) && listed.length > 0 ? listed.filter((s): s is string => typeof s === 'string') : SPEC_SCOPE_NAMES;
      return [...new Set(names)].map((value) => ({ value, description: describeScope(value) }));
    }
    case 'paths': {
      const baseUrl = platformOf(ctx, await currentProfile(ctx, { mayBeNew: true }));
      const index = baseUrl ? await readCachedIndex(ctx.configDir, baseUrl, ctx.now(), Infinity) : undefined;
      const byPath = new Map<string, string[]>();
      for (const op of index?.operations ?? []) byPath.set(op.path, [...(byPath.get(op.path) ?? []), op.method]);
      return [...byPath].map(([value, methods]) => {
        const summary = index!.operations.find((op) => op.path === value && op.summary)?.summary ?? undefined;
        return { value, description: [methods.join(','), summary].filter(Boolean).join(' ') };
      });
    }
  }
}

export function formatCandidates(list: Candidate[]): string {
  return list
    .filter((c) => SAFE.test(c.value))
    .map((c) => {
      const description = clean(c.description);
      return description ? `${c.value}\t${description}` : c.value;
    })
    .map((line) => `${line}\n`)
    .join('');
}
