/**
 * `plat mcp` started the way agent hosts start it: with the MCP SDK's default environment (HOME, LOGNAME, PATH,
 * SHELL, TERM, USER: no DBUS_SESSION_BUS_ADDRESS), through the SDK's own client and through the MCP Inspector's CLI
 * (@modelcontextprotocol/inspector-cli, which hands the server its own environment), against the reference platform
 * and the real gnome-keyring test/run.mjs starts. The host configurations `plat help agents` shows are parsed and
 * started as shown.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { platBin, repoRoot } from '../helpers/cli.js';
import { keyring } from '../helpers/components.js';
import { signIn } from '../helpers/consent.js';
import { useHome, usePlatform } from '../helpers/platform.js';
import { readProfile } from '../helpers/state.js';

const platform = usePlatform();
const home = useHome();
const INSPECTOR = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build', 'index.js');
/** The placeholder the help topic shows for the user's bus. */
const SHOWN_BUS = 'unix:path=/run/user/1000/bus';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/**
 * What a host gives plat: the SDK's default environment, and only what the test needs to keep plat in its own home
 * (its config dir; under coverage, where V8 writes). No D-Bus variable, no XDG_RUNTIME_DIR unless `extra` adds one.
 */
function hostEnv(extra: Record<string, string> = {}): Record<string, string> {
  const own = Object.fromEntries(['NODE_V8_COVERAGE', 'XDG_CACHE_HOME'].flatMap((k) => (home.env[k] ? [[k, home.env[k]!]] : [])));
  const env = { ...getDefaultEnvironment(), ...own, HOME: home.dir, PLAT_CONFIG_DIR: home.configDir };
  expect(env).not.toHaveProperty('DBUS_SESSION_BUS_ADDRESS');
  expect(env).not.toHaveProperty('XDG_RUNTIME_DIR');
  return { ...env, ...extra };
}

/** The SDK's client on `plat <args>` with exactly `env` (the SDK adds its defaults, which hostEnv holds already). */
async function connect(args: string[], env: Record<string, string>) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [platBin, ...args], env, stderr: 'pipe' });
  let stderr = '';
  (transport.stderr as Readable).setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const client = new Client({ name: 'plat-host-test', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as { content: Array<{ text: string }>; structuredContent?: any; isError?: boolean };
  return { client, call, stderr: () => stderr };
}

/** The Inspector's CLI, itself started with `env` (it passes its environment on to the server it starts). */
function inspect(method: string[], serverArgs: string[], env: Record<string, string>): Promise<{ code: number; json: any; stderr: string }> {
  return new Promise((resolve) => {
    // Its shape: the server's command first, then its own options, then `--` and the rest of the server's arguments.
    // It runs from its own folder: it finds its package.json (its client name) relative to the working directory.
    const args = [INSPECTOR, process.execPath, platBin, 'mcp', ...method, '--', ...serverArgs];
    execFile(process.execPath, args, { env, cwd: path.dirname(INSPECTOR) }, (error, stdout, stderr) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = stdout;
      }
      resolve({ code: error ? Number(error.code ?? 1) : 0, json, stderr });
    });
  });
}

const text = (result: { content: Array<{ text: string }> }) => result.content.map((c) => c.text).join('\n');

describe('through the MCP Inspector CLI, with a host\'s minimal environment', () => {
  it('before a login: the operations are listed, one that needs a session names the login, a public one goes anonymously; after it, a call goes as the person', async () => {
    const env = hostEnv();
    const listed = await inspect(['--method', 'tools/list'], ['--base-url', platform.baseUrl], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['whoami', 'call', 'getCourse', 'echo']));

    const refused = await inspect(['--method', 'tools/call', '--tool-name', 'getCourse', '--tool-arg', 'courseId=course-101'], ['--base-url', platform.baseUrl], env);
    expect(refused.json).toMatchObject({ isError: true, content: [{ text: `Not logged in. Run: plat login --base-url ${platform.baseUrl}` }] });
    const open = await inspect(['--method', 'tools/call', '--tool-name', 'echo'], ['--base-url', platform.baseUrl], env);
    expect(open.json.isError, JSON.stringify(open.json)).toBeFalsy();
    expect(open.json.structuredContent).toMatchObject({ authenticated: false });

    await signIn(home, platform, ['--scope', 'courses:read']);
    const course = await inspect(['--method', 'tools/call', '--tool-name', 'getCourse', '--tool-arg', 'courseId=course-101'], [], env);
    expect(course.json.structuredContent, JSON.stringify(course.json)).toMatchObject({ authenticated: true, course: { id: 'course-101' } });
    const only = await inspect(['--method', 'tools/list'], ['--for', 'getCourse'], env);
    expect(only.json.tools.map((t: { name: string }) => t.name)).toEqual(['getCourse']);
  });
});

describe.skipIf(keyring.skip)(keyring.title('the keychain, from a host\'s minimal environment'), () => {
  /** The test bus's socket (test/run.mjs's dbus-run-session), which the host's environment does not name. */
  function busSocket(): string {
    const match = /unix:path=([^,;]+)/.exec(process.env.DBUS_SESSION_BUS_ADDRESS ?? '');
    if (!match) throw new Error(`the test bus is not a unix path: ${process.env.DBUS_SESSION_BUS_ADDRESS}`);
    return match[1]!;
  }

  /** A runtime dir as a session manager makes one: `bus` is the user's session bus. */
  async function runtimeDir(): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'plat-runtime-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await symlink(busSocket(), path.join(dir, 'bus'));
    return dir;
  }

  const signInToKeychain = async () => {
    await signIn(home, platform, ['--scope', 'courses:read'], { PLAT_TOKEN_STORE: undefined });
    expect((await readProfile(home)).tokenStore).toBe('keychain');
  };

  /**
   * The user's bus where systemd puts it, /run/user/<uid>/bus, made to lead to the test bus for this test: only where
   * there is none already (a real one is the developer's own keychain, never touched) and the test may make it.
   */
  const userBus = `/run/user/${process.getuid?.()}/bus`;
  const mayPlaceUserBus = (() => {
    if (existsSync(userBus) || process.platform !== 'linux') return false;
    try {
      accessSync(existsSync(path.dirname(userBus)) ? path.dirname(userBus) : '/run/user', constants.W_OK);
      return true;
    } catch {
      return false;
    }
  })();

  it.skipIf(!mayPlaceUserBus)('the SDK client with its default environment alone reaches the session in the keychain through /run/user/<uid>/bus', async () => {
    keyring.require();
    await signInToKeychain();
    const dir = path.dirname(userBus);
    const madeDir = !existsSync(dir);
    if (madeDir) await mkdir(dir, { mode: 0o700 });
    await symlink(busSocket(), userBus);
    cleanups.push(async () => {
      await rm(userBus, { force: true });
      if (madeDir) await rm(dir, { recursive: true, force: true });
    });
    const served = await connect(['mcp'], hostEnv());
    const course = await served.call('getCourse', { courseId: 'course-101' });
    expect(course.structuredContent, text(course)).toMatchObject({ authenticated: true });
    // keytar (libsecret, which writes) reaches it too: a 401 for the access token makes the next call refresh once
    // and store the new tokens, which the call after it reads back without refreshing again.
    let refused = false;
    platform.override('/api/courses/course-101', (_req, res) => {
      if (refused) return false;
      refused = true;
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' });
      res.end();
      return true;
    });
    platform.stats.reset();
    for (let i = 0; i < 2; i++) {
      const again = await served.call('getCourse', { courseId: 'course-101' });
      expect(again.structuredContent, text(again)).toMatchObject({ authenticated: true });
    }
    expect(platform.stats.count('token:refresh_token')).toBe(1);
    expect((await served.call('whoami')).structuredContent).toMatchObject({ profile: 'default' });
    expect(served.stderr()).not.toMatch(/keychain|warning/i);
  });

  it('the SDK client with its default environment and XDG_RUNTIME_DIR reaches the keychain through $XDG_RUNTIME_DIR/bus', async () => {
    keyring.require();
    await signInToKeychain();
    // (libsecret finds this bus by itself, so keytar alone did before; plat's own reader now does too.)
    const served = await connect(['mcp'], hostEnv({ XDG_RUNTIME_DIR: await runtimeDir() }));
    const course = await served.call('getCourse', { courseId: 'course-101' });
    expect(course.structuredContent, text(course)).toMatchObject({ authenticated: true });
    expect(served.stderr()).not.toMatch(/keychain|warning/i);
  });

  it.skipIf(existsSync(`/run/user/${process.getuid?.()}/bus`))('no bus to find: the tool error says what to put in the host\'s configuration', async () => {
    keyring.require();
    await signInToKeychain();
    const served = await connect(['mcp'], hostEnv());
    const course = await served.call('getCourse', { courseId: 'course-101' });
    expect(course.isError).toBe(true);
    expect(text(course)).toMatch(/^The OS keychain is not available/);
    expect(text(course)).toContain(`Add to plat's entry in the host's configuration "env": {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/${process.getuid!()}/bus"}`);
    expect(text(course)).toContain('run PLAT_TOKEN_STORE=file plat refresh once in that terminal and add "env": {"PLAT_TOKEN_STORE": "file"}');
    expect(served.stderr()).toContain('plat mcp: The OS keychain is not available');
  });

  it('each host configuration plat help agents shows parses, and starts plat with the env it shows', async () => {
    keyring.require();
    await signInToKeychain();
    const topic = await home.run(['help', 'agents']);
    expect(topic.code).toBe(0);
    // The topic as a person reads it: its examples are the blocks indented by four spaces.
    const blocks = [...topic.stdout.matchAll(/(?:^ {4}.*\n)+/gm)].map((m) => m[0].replace(/^ {4}/gm, ''));
    const configs: Array<{ host: string; command: string; args: string[]; env: Record<string, string> }> = [];
    for (const body of blocks) {
      for (const line of body.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
      if (body.startsWith('{')) {
        const parsed = JSON.parse(body);
        const [host, entry] = parsed.mcpServers ? ['Claude Desktop, Cursor', parsed.mcpServers.plat] : ['VS Code', parsed.servers.plat];
        if (host === 'VS Code') expect(entry.type).toBe('stdio');
        configs.push({ host, command: entry.command, args: entry.args, env: entry.env });
      } else if (body.includes('mcp add')) {
        for (const line of body.replace(/\\\n\s*/g, '').trim().split('\n')) {
          const words = line.split(/\s+/);
          const dashes = words.indexOf('--');
          const env: Record<string, string> = {};
          words.slice(0, dashes).forEach((word, i) => {
            if (word === '-e' || word === '--env') {
              const [name, ...value] = words[i + 1]!.split('=');
              env[name!] = value.join('=');
            }
          });
          configs.push({ host: words[0]!, command: words[dashes + 1]!, args: words.slice(dashes + 2), env });
        }
      }
    }
    expect(configs.map((c) => c.host)).toEqual(['claude', 'codex', 'Claude Desktop, Cursor', 'VS Code']);
    for (const config of configs) {
      expect(config.command, config.host).toBe('plat');
      expect(config.args, config.host).toEqual(['mcp']);
      expect(config.env, config.host).toEqual({ DBUS_SESSION_BUS_ADDRESS: SHOWN_BUS });
      // The value shown is a placeholder for the user's own (echo $DBUS_SESSION_BUS_ADDRESS): here, the test bus.
      const env = Object.fromEntries(Object.entries(config.env).map(([k, v]) => [k, v === SHOWN_BUS ? process.env.DBUS_SESSION_BUS_ADDRESS! : v]));
      const served = await connect(config.args, hostEnv(env));
      const course = await served.call('getCourse', { courseId: 'course-101' });
      expect(course.structuredContent, `${config.host}: ${text(course)}`).toMatchObject({ authenticated: true });
      await served.client.close();
    }
  });
});
