import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import {
  cacheDir,
  lockTargetPath,
  locksDir,
  platformConfigDir,
  profilePath,
  profilesDir,
  resolveConfigDir,
  tokenFilePath,
  tokensDir,
  validateProfileName,
} from '../../../src/store/paths.js';

describe('resolveConfigDir', () => {
  it('uses PLAT_CONFIG_DIR over everything else', () => {
    expect(resolveConfigDir({ PLAT_CONFIG_DIR: '/srv/plat conf', XDG_CONFIG_HOME: '/x' }, 'linux', '/home/u')).toBe(
      '/srv/plat conf',
    );
    expect(resolveConfigDir({ PLAT_CONFIG_DIR: 'C:\\plat', APPDATA: 'C:\\A' }, 'win32', 'C:\\Users\\u')).toBe(
      'C:\\plat',
    );
  });

  it('follows XDG on Linux and other Unixes', () => {
    expect(resolveConfigDir({}, 'linux', '/home/u')).toBe('/home/u/.config/plat');
    expect(resolveConfigDir({ XDG_CONFIG_HOME: '/home/u/cfg' }, 'linux', '/home/u')).toBe('/home/u/cfg/plat');
    expect(resolveConfigDir({ XDG_CONFIG_HOME: '/xdg' }, 'freebsd', '/home/u')).toBe('/xdg/plat');
  });

  it('ignores an empty or relative XDG_CONFIG_HOME and an empty PLAT_CONFIG_DIR', () => {
    expect(resolveConfigDir({ XDG_CONFIG_HOME: '' }, 'linux', '/home/u')).toBe('/home/u/.config/plat');
    expect(resolveConfigDir({ XDG_CONFIG_HOME: 'rel/cfg' }, 'linux', '/home/u')).toBe('/home/u/.config/plat');
    expect(resolveConfigDir({ PLAT_CONFIG_DIR: '' }, 'linux', '/home/u')).toBe('/home/u/.config/plat');
  });

  it('uses Application Support on macOS, whatever XDG says', () => {
    expect(resolveConfigDir({ XDG_CONFIG_HOME: '/xdg' }, 'darwin', '/Users/u')).toBe(
      '/Users/u/Library/Application Support/plat',
    );
  });

  it('platformConfigDir is where the config would be without PLAT_CONFIG_DIR (keychain entries are namespaced when the two differ)', () => {
    expect(platformConfigDir({ PLAT_CONFIG_DIR: '/srv/plat', XDG_CONFIG_HOME: '/xdg' }, 'linux', '/home/u')).toBe('/xdg/plat');
    expect(platformConfigDir({ PLAT_CONFIG_DIR: '/srv/plat' }, 'linux', '/home/u')).toBe('/home/u/.config/plat');
    expect(platformConfigDir({ PLAT_CONFIG_DIR: 'C:\\plat', APPDATA: 'C:\\A' }, 'win32', 'C:\\Users\\u')).toBe('C:\\A\\plat');
  });

  it('uses %APPDATA% on Windows, or its usual place when unset', () => {
    expect(resolveConfigDir({ APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, 'win32', 'C:\\Users\\u')).toBe(
      'C:\\Users\\u\\AppData\\Roaming\\plat',
    );
    expect(resolveConfigDir({}, 'win32', 'C:\\Users\\u')).toBe('C:\\Users\\u\\AppData\\Roaming\\plat');
  });
});

describe('layout', () => {
  it('places profiles, tokens, locks and cache inside the config dir', () => {
    const c = '/cfg/plat';
    expect(profilesDir(c)).toBe('/cfg/plat/profiles');
    expect(profilePath(c, 'work')).toBe('/cfg/plat/profiles/work.json');
    expect(tokensDir(c)).toBe('/cfg/plat/tokens');
    expect(tokenFilePath(c, 'work')).toBe('/cfg/plat/tokens/work.json');
    expect(locksDir(c)).toBe('/cfg/plat/locks');
    expect(lockTargetPath(c, 'work')).toBe('/cfg/plat/locks/work');
    expect(cacheDir(c)).toBe('/cfg/plat/cache');
  });

  it('refuses to build a path from an invalid profile name', () => {
    expect(() => tokenFilePath('/cfg', '../../etc/passwd')).toThrow(UsageError);
    expect(() => profilePath('/cfg', 'a/b')).toThrow(UsageError);
  });
});

describe('validateProfileName', () => {
  it.each(['default', 'work', 'Prod-2', 'a.b_c-d', 'x', '9', '_x', 'a'.repeat(64)])('accepts %s', (name) => {
    expect(validateProfileName(name)).toBe(name);
  });

  it.each(['', '.hidden', '..', 'a/b', 'a\\b', 'has space', 'ü', 'a'.repeat(65), 'tab\t', 'new\nline'])(
    'rejects %j with a usage error that explains the rule',
    (name) => {
      let error: unknown;
      try {
        validateProfileName(name);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).exitCode).toBe(2);
      expect((error as UsageError).message).toMatch(
        /^Invalid profile name .*: use 1 to 64 letters, digits, '\.', '_' or '-', not starting with a dot\.$/s,
      );
    },
  );

  it('shows a long rejected name cut to 67 characters, and a value that is not a string as itself', () => {
    expect(() => validateProfileName(`${'x'.repeat(80)}/`)).toThrow(`Invalid profile name "${'x'.repeat(67)}...": use 1 to 64`);
    // The library's callers are not held to the types: a number names itself, unquoted.
    expect(() => validateProfileName(42 as unknown as string)).toThrow(/^Invalid profile name 42: use 1 to 64/);
  });
});
