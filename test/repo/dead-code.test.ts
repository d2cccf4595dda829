/**
 * Dead code fails the suite (knip, configured in test/knip.jsonc): an export nothing imports, a file nothing reaches,
 * a dependency nothing uses, a program or package used but not declared. Offline and quick (~1.5 s a run).
 *
 * An export only the tests use is not dead, but it is not product either: `knip --production` (the product's
 * entries alone) finds those, and each is listed below with the tests that use it. A new one fails until it is
 * listed (or made internal); a listed one that the product starts using, or that goes away, fails until it is
 * taken off the list.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// knip's package exports no package.json to resolve; the project installs it beside the others.
const knipBin = path.join(root, 'node_modules', 'knip', 'bin', 'knip.js');

/** Exports of src/ that only tests import, by file, with the tests that use them. */
const USED_ONLY_BY_TESTS: Record<string, Record<string, string>> = {
  'src/terminal/browser.ts': { splitCommand: 'test/unit/terminal/browser.test.ts' },
  'src/mcp/schema.ts': { MAX_DEPTH: 'test/unit/mcp/tools.test.ts' },
  'src/mcp/tools.ts': { annotationsFor: 'test/unit/mcp/tools.test.ts', toolName: 'test/unit/mcp/tools.test.ts' },
  'src/terminal/io.ts': { colorWanted: 'test/unit/terminal/io.test.ts' },
  'src/oauth/authorize.ts': { CALLBACK_ERRORS: 'test/unit/oauth/errors.test.ts' },
  'src/oauth/client.ts': { secretMethod: 'test/unit/oauth/client-server-choices.test.ts, test/cli/login/registration.test.ts' },
  'src/proxy/forward.ts': { throughProxy: 'test/unit/proxy/forward.test.ts (base paths, which the reference platform has none of)' },
  'src/oauth/scopes.ts': { DEFAULT_SCOPES: 'test/unit/oauth/scopes.test.ts', formatScopes: 'test/unit/oauth/scopes.test.ts' },
  'src/redact.ts': { REDACTED: 'test/unit/redact.test.ts', redactForm: 'test/unit/redact.test.ts', redactJson: 'test/unit/redact.test.ts' },
  'src/session/tokens/refresh.ts': { needsRefresh: 'test/unit/session/tokens/refresh.test.ts (the margin rule; refreshDue asks it)' },
  'src/session/discovery/discovery-cache.ts': { DISCOVERY_TTL_MS: 'test/faults/trust.test.ts, test/in-process/session/logout-and-discovery.test.ts' },
  'src/session/paging/detect.ts': { nextLink: 'test/unit/session/paging/detect.test.ts, test/cli/paginate.test.ts, test/platform/lists.mjs' },
  'src/session/request.ts': { MAX_RETRY_AFTER_MS: 'test/unit/session/request.test.ts', retryDelay: 'test/unit/session/request.test.ts', backoff: 'test/unit/session/request.test.ts' },
  'src/store/dbus.ts': {
    DBusError: 'test/unit/store/dbus.test.ts',
    MAX_MESSAGE: 'test/unit/store/dbus.test.ts',
    encodeMessage: 'test/unit/store/dbus.test.ts (builds frames)',
    OutgoingMessage: "encodeMessage's argument",
    splitSignature: 'test/unit/store/dbus.test.ts, test/in-process/store/secret-service.test.ts',
  },
  'src/store/keychain.ts': { pickKeytarApi: 'test/in-process/store/keychain.test.ts' },
  'src/store/keytar-item.ts': {
    KEYTAR_SCHEMA: 'test/in-process/store/secret-service.test.ts (writes items as keytar does)',
    KEYTAR_CONTENT_TYPE: 'test/in-process/store/secret-service.test.ts',
    encodeKeytarSecret: 'test/in-process/store/secret-service.test.ts',
  },
  'src/store/paths.ts': { cacheDir: 'test/unit/store/paths.test.ts, test/cli/startup.test.ts' },
  'src/store/secret-service.ts': { mayUseLibsecretFile: 'test/in-process/store/secret-service.test.ts' },
  'src/store/select.ts': { AutoTokenStore: 'test/in-process/store/select.test.ts' },
  'src/terminal/text.ts': { isPrintable: 'test/unit/terminal/text.test.ts', editDistance: 'test/unit/oauth/scopes.test.ts' },
};

function knip(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [knipBin, '--config', 'test/knip.jsonc', '--no-progress', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('dead code', () => {
  it('no unused file, export, type or dependency, and nothing used but undeclared', () => {
    const result = knip([]);
    expect(result.stdout, 'knip found dead code (remove it, or see test/knip.jsonc)').toBe('');
    expect(result.code, result.stderr).toBe(0);
  });

  it('the exports only tests use are exactly the listed ones', () => {
    const result = knip(['--production', '--include', 'exports,types', '--reporter', 'json', '--no-exit-code']);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { issues: Array<{ file: string; exports?: Array<{ name: string }>; types?: Array<{ name: string }> }> };
    const found: Record<string, string[]> = {};
    for (const issue of report.issues) {
      const names = [...(issue.exports ?? []), ...(issue.types ?? [])].map((e) => e.name);
      if (names.length > 0) found[issue.file] = names.sort();
    }
    const listed = Object.fromEntries(Object.entries(USED_ONLY_BY_TESTS).map(([file, names]) => [file, Object.keys(names).sort()]));
    expect(found).toEqual(listed);
  });
});
