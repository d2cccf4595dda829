/**
 * The layer rules of shared design (src/README.md, "Layers"), written once and held against the real import graph
 * of src/: every `import`, `import type`, `export … from`, `import()` and `typeof import()` of every .ts file counts,
 * because a type-only or lazy import still ties two layers together (and still makes a cycle a reader must untangle).
 * The one exception is written beside the rules: commands may name the shapes the store keeps, type-only. And no
 * module re-exports another's symbols, so each has one import path: the module that defines it. The layers above
 * the session (commands, the library, completion) enter it by one door, src/session/index.ts, whose verbs all take
 * the token path that honours PLAT_TOKEN and the origin rule.
 *
 * A new import that breaks a rule fails here with the file, line and rule it breaks, instead of waiting for a review.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The layers (src/README.md, "Layers"; the parts proposed for ../shared/architecture.json), by the files they are
 *  made of (a folder ends with '/'; a file named on its own wins over its folder). Files in no layer (errors, redact,
 *  esm, sleep, the terminal's room: io, text, stream-out, browser, child, jq) are the leaves any layer may use; so are
 *  Context, Shapes and HTTP's own leaves. */
const LAYERS = {
  entry: ['src/main.ts', 'src/cli.ts', 'src/dispatch.ts'],
  // The ways in for programs, each an adapter over the session's front door: the Node library (dist/library/), the
  // MCP server for agents (src/mcp/; load.ts is the piece dist/main.cjs keeps), the local proxy for any HTTP tool.
  library: ['src/library/'],
  mcp: ['src/mcp/'],
  proxy: ['src/proxy/'],
  commands: ['src/commands/'],
  // Requests built from input (flags and fields, an operation's parameters, a batch-shaped object), for commands and
  // every adapter alike: below them, above the session.
  requests: ['src/requests/'],
  // `plat __complete`: answered from local files only.
  candidates: ['src/completion/candidates.ts'],
  completion: ['src/completion/'],
  catalogue: ['src/catalogue/'],
  // The bulk engine (workers, governor, journal): behind the session's front door, which loads it on use.
  batch: ['src/batch/'],
  session: ['src/session/'],
  context: ['src/context.ts'],
  protocol: ['src/oauth/'],
  loopback: ['src/loopback.ts'],
  // HTTP's leaves: what a body or a header name means, for any layer; they make no request.
  httpLeaves: ['src/http/body-error.ts', 'src/http/read-body.ts', 'src/http/network-codes.ts', 'src/http/header-rule.ts'],
  http: ['src/http/'],
  // What plat keeps, as types: any layer may name them.
  shapes: ['src/store/types.ts'],
  store: ['src/store/'],
  // Leaves any layer may use; named only so that the help topics (which render to the terminal) stay above it.
  help: ['src/help/'],
  terminal: ['src/terminal/'],
} as const;
type Layer = keyof typeof LAYERS;

/** The arrows that must never exist, and why (the whiteboard's "never"). */
const NEVER: ReadonlyArray<readonly [Layer, Layer, string]> = [
  ['protocol', 'store', 'the protocol returns its own types'],
  ['protocol', 'shapes', 'the protocol returns its own types: the session maps them to what it stores'],
  ['protocol', 'session', 'the protocol knows no session'],
  ['protocol', 'commands', 'the protocol knows no command'],
  ['commands', 'protocol', 'commands go through the session'],
  ['commands', 'store', 'commands go through the session'],
  ['commands', 'http', "commands make their requests through the session's front door (session/index.ts: openClient)"],
  ...(['library', 'mcp', 'proxy'] as const).flatMap((way) => [
    [way, 'protocol', way === 'library' ? 'the library goes through the session' : 'a way in goes through the session'],
    [way, 'store', 'a way in goes through the session'],
    [way, 'commands', 'no command line in a way in for programs'],
    // plat mcp paces its calls with the batch engine's governor (one governor, not a second), through the door.
    ...(way === 'proxy' ? [[way, 'batch', 'a way in for one request at a time sends no batch'] as const] : []),
  ] as const),
  ['mcp', 'http', "the MCP server's requests go through the session's front door"],
  ['requests', 'commands', 'requests are built below the commands, for every way in'],
  ['requests', 'mcp', 'requests are built below the adapters'],
  ['requests', 'library', 'requests are built below the adapters'],
  ['requests', 'store', 'requests go through the session'],
  ['requests', 'protocol', 'requests go through the session'],
  ['commands', 'entry', 'a command defines itself (<command>.define.ts); the entry only lists the definitions'],
  ['batch', 'commands', 'the engine knows no command line'],
  ['batch', 'store', 'the engine goes through the session'],
  ['batch', 'protocol', 'the engine goes through the session'],
  ['proxy', 'http', "the proxy's requests go through the session's front door (openClient), which adds the token by its rules"],
  ['proxy', 'entry', 'the proxy serves commands and the library alike'],
  ['session', 'batch', 'the session knows no bulk engine: the engine sends through the session, and commands and the library reach it by its own door'],
  ['store', 'session', 'storage knows no flow'],
  ['store', 'http', 'storage makes no requests'],
  ['http', 'session', 'the transport knows no session'],
  ['completion', 'entry', 'completion reads the program it is given'],
  ['completion', 'session', 'completion reads the program it is given'],
  ['candidates', 'http', 'a Tab press stays offline'],
  ['context', 'session', 'the context builds effects and runs no flow'],
  ['terminal', 'help', "the terminal's leaves know no help topic: help/ renders through them"],
];

/**
 * The session's front door (issue 28): these layers may import from the session only this file, types included, so
 * none of them can reach a step (loadSession, a refresh, a binding) that skips PLAT_TOKEN or the origin rule.
 */
const SESSION_DOOR = 'src/session/index.ts';
const THROUGH_THE_DOOR: readonly Layer[] = ['commands', 'library', 'mcp', 'proxy', 'requests', 'completion', 'candidates'];

/**
 * The batch engine's front door (batch/index.ts): plat batch and client.batch() start a batch and open a journal
 * there; plat mcp takes the governor that paces its tool calls (governRequests) there.
 */
const BATCH_DOOR = 'src/batch/index.ts';
const THROUGH_THE_BATCH_DOOR: readonly Layer[] = ['commands', 'library', 'mcp'];

/** A module a forbidden arrow may reach with `import type` (or `typeof import()`) only; none today. */
const TYPE_ONLY_EXCEPTIONS: ReadonlyArray<readonly [Layer, string, string]> = [];

/**
 * Violations that in-flight work removes (issue 15): the lead empties this list. An entry that no longer occurs
 * fails the test too, so the list can only shrink; a violation not on it fails at once.
 */
const KNOWN_VIOLATIONS: readonly string[] = [];

interface Import {
  from: string;
  to: string;
  line: number;
  specifier: string;
  /** Erased from the output: `import type`, `import { type A }` with every name a type, `export type`, `typeof import()`. */
  typeOnly: boolean;
  /** `export … from`: the module hands on another's symbols. */
  reExport: boolean;
  /** `import()`: loaded when that line runs, not with the module. */
  lazy: boolean;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(root, dir)).sort()) {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(root, rel)).isDirectory()) out.push(...sourceFiles(rel));
    else if (name.endsWith('.ts')) out.push(rel); // .d.ts too: the library's public types are imported
  }
  return out;
}

/** The module a relative specifier names, as a path from the repository root ('./x.js' is './x.ts' in source); a
 *  package or node: builtin as it is named. */
function resolve(from: string, specifier: string, files: ReadonlySet<string>): string {
  if (!specifier.startsWith('.')) return specifier;
  const base = path.posix.join(path.posix.dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.d.ts'), base, `${base}.ts`, `${base}/index.ts`];
  return candidates.find((c) => files.has(c)) ?? `${base} (unresolved)`;
}

/** Every module reference in one file, static, type-only, re-exported or dynamic. */
function importsOf(file: string, text: string, files: ReadonlySet<string>): Import[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (node: ts.Node, literal: ts.Expression | undefined, typeOnly: boolean) => {
    if (!literal || !ts.isStringLiteralLike(literal)) return;
    const to = resolve(file, literal.text, files);
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    const lazy = ts.isCallExpression(node);
    found.push({ from: file, to, line, specifier: literal.text, typeOnly, reExport: ts.isExportDeclaration(node), lazy });
  };
  const everyNameIsAType = (names: ts.NamedImports | ts.NamedExports | ts.NamespaceImport | ts.NamespaceExport | undefined) =>
    names !== undefined && (ts.isNamedImports(names) || ts.isNamedExports(names)) && names.elements.length > 0 && names.elements.every((e) => e.isTypeOnly);
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      add(node, node.moduleSpecifier, clause !== undefined && (clause.isTypeOnly || (!clause.name && everyNameIsAType(clause.namedBindings))));
    } else if (ts.isExportDeclaration(node)) add(node, node.moduleSpecifier, node.isTypeOnly || everyNameIsAType(node.exportClause));
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, node.arguments[0], false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal, true);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node, node.moduleReference.expression, node.isTypeOnly);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function layerOf(file: string): Layer | undefined {
  for (const [layer, parts] of Object.entries(LAYERS) as [Layer, readonly string[]][]) {
    if (parts.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p))) return layer;
  }
  return undefined;
}

/** Strongly connected components (Tarjan): every import between two files of one component lies on a cycle. */
function components(nodes: readonly string[], edges: ReadonlyMap<string, ReadonlySet<string>>): Map<string, number> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const component = new Map<string, number>();
  let next = 0;
  let count = 0;
  const connect = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.set(w, count);
      } while (w !== v);
      count++;
    }
  };
  for (const v of nodes) if (!index.has(v)) connect(v);
  return component;
}

/** The shortest way back from `to` to `from`, to show the whole cycle an import closes. */
function pathBack(from: string, to: string, edges: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const previous = new Map<string, string>([[to, to]]);
  const queue = [to];
  while (queue.length > 0) {
    const v = queue.shift()!;
    if (v === from) break;
    for (const w of edges.get(v) ?? []) {
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  const way = [from];
  for (let v = from; v !== to; ) {
    v = previous.get(v)!;
    way.unshift(v);
  }
  return [from, ...way];
}

interface Violation {
  key: string;
  detail: string;
}

/** Every rule broken by a set of imports: one violation per pair of files, naming each import line. */
function violations(files: readonly string[], imports: readonly Import[]): Violation[] {
  const edges = new Map<string, Set<string>>();
  for (const i of imports) {
    if (!edges.has(i.from)) edges.set(i.from, new Set());
    edges.get(i.from)!.add(i.to);
  }
  const component = components(files, edges);
  const byKey = new Map<string, { detail: string; lines: number[]; specifier: string; from: string }>();
  const note = (key: string, i: Import, detail: string) => {
    const known = byKey.get(key);
    if (known) known.lines.push(i.line);
    else byKey.set(key, { detail, lines: [i.line], specifier: i.specifier, from: i.from });
  };
  for (const i of imports) {
    if (i.to.endsWith('(unresolved)')) {
      note(`unresolved: ${i.from} → ${i.to}`, i, 'names a module that does not exist');
      continue;
    }
    const [a, b] = [layerOf(i.from), layerOf(i.to)];
    const excepted = i.typeOnly && TYPE_ONLY_EXCEPTIONS.some(([layer, file]) => a === layer && i.to === file);
    for (const [from, to, why] of NEVER) {
      if (a === from && b === to && !excepted) note(`${from} → ${to}: ${i.from} → ${i.to}`, i, why);
    }
    if (a !== undefined && THROUGH_THE_DOOR.includes(a) && b === 'session' && i.to !== SESSION_DOOR) {
      note(`session door: ${i.from} → ${i.to}`, i, `enters the session by a side door: import from its front door, ${SESSION_DOOR} (add a verb there if none fits)`);
    }
    if (a !== undefined && THROUGH_THE_BATCH_DOOR.includes(a) && b === 'batch' && i.to !== BATCH_DOOR) {
      note(`batch door: ${i.from} → ${i.to}`, i, `enters the batch engine by a side door: import from its front door, ${BATCH_DOOR}`);
    }
    if (i.reExport) note(`re-export: ${i.from} → ${i.to}`, i, 'hands on symbols of another module: import them from where they are defined');
    if (i.from === i.to || (component.get(i.from) !== undefined && component.get(i.from) === component.get(i.to))) {
      note(`cycle: ${i.from} → ${i.to}`, i, `closes the import cycle ${pathBack(i.from, i.to, edges).join(' → ')}`);
    }
  }
  return [...byKey.entries()]
    .map(([key, v]) => ({ key, detail: `${v.from}:${v.lines.join(',')} imports '${v.specifier}': ${v.detail}` }))
    .sort((x, y) => x.key.localeCompare(y.key));
}

function graph() {
  const files = sourceFiles('src');
  const known = new Set(files);
  const imports = files.flatMap((f) => importsOf(f, readFileSync(path.join(root, f), 'utf8'), known));
  return { files, imports };
}

describe('the import graph of src/ keeps the layers', () => {
  const { files, imports } = graph();
  const found = violations(files, imports);

  it('breaks no rule that is not on the known list', () => {
    const unknown = found.filter((v) => !KNOWN_VIOLATIONS.includes(v.key));
    expect(unknown.map((v) => `${v.key}\n    ${v.detail}`)).toEqual([]);
  });

  it('still breaks every rule on the known list (remove an entry once its violation is gone)', () => {
    const keys = new Set(found.map((v) => v.key));
    expect(KNOWN_VIOLATIONS.filter((k) => !keys.has(k))).toEqual([]);
  });

  it('reads every kind of import: static, type-only, re-export and dynamic', () => {
    const has = (from: string, to: string) => imports.some((i) => i.from === from && i.to === to);
    expect(has('src/commands/auth/login.define.ts', 'src/commands/auth/login.ts')).toBe(true); // import() in an action
    expect(has('src/cli.ts', 'src/context.ts')).toBe(true); // import type
    expect(files.length).toBeGreaterThan(50);
  });
});

/**
 * What a command loads when it starts: the static imports, followed from module to module, that are not type-only
 * (erased) nor import() (esbuild's bundle initialises a module's static imports when the module loads, and an
 * import() only when that line runs). `via` maps each module reached to the one that imported it.
 */
function loadedBy(start: string, imports: readonly Import[]): Map<string, string> {
  const via = new Map<string, string>([[start, '']]);
  const queue = [start];
  while (queue.length > 0) {
    const from = queue.shift()!;
    for (const i of imports) {
      if (i.from !== from || i.typeOnly || i.lazy || via.has(i.to)) continue;
      via.set(i.to, from);
      queue.push(i.to);
    }
  }
  return via;
}

function chain(via: ReadonlyMap<string, string>, module: string): string {
  const way = [module];
  for (let m = via.get(module); m; m = via.get(m)) way.unshift(m);
  return way.join(' → ');
}

describe('the token path loads no protocol library', () => {
  // oauth4webapi's initialisation costs every start that loads it. These commands read the stored session, and
  // whoami and status read UserInfo with plat's own request (oauth/userinfo.ts, oauth/endpoints.ts: no value import
  // of oauth4webapi); they load it with import() only to refresh or discover. The entry's own imports count too.
  const { imports } = graph();
  const TOKEN_PATH = ['src/commands/auth/whoami.ts', 'src/commands/auth/token.ts', 'src/commands/call/call.ts', 'src/commands/auth/status.ts', 'src/commands/auth/refresh.ts'];

  it.each(['src/main.ts', ...TOKEN_PATH])('%s loads no oauth4webapi when it starts', (start) => {
    const via = loadedBy(start, imports);
    expect(via.has('oauth4webapi') ? chain(via, 'oauth4webapi') : 'not loaded').toBe('not loaded');
  });

  it('src/main.ts loads no commander when it starts: the plain forms run without it (src/dispatch.ts)', () => {
    const via = loadedBy('src/main.ts', imports);
    expect(via.has('commander') ? chain(via, 'commander') : 'not loaded').toBe('not loaded');
    expect(chain(loadedBy('src/cli.ts', imports), 'commander')).toBe('src/cli.ts → commander');
  });

  it('sees through the chain: the login flow (session/login/login.ts, which plat login loads through signIn) does load it', () => {
    expect(chain(loadedBy('src/session/login/login.ts', imports), 'oauth4webapi')).toMatch(/^src\/session\/login\/login\.ts → .* → oauth4webapi$/);
  });
});

describe("each command's definition (commands/**/<command>.define.ts) loads no run", () => {
  // src/cli.ts imports every definition on each start that builds the program: a definition's run (and what it
  // loads: the session, the protocol) must wait for import() in its action, or every command would carry every run.
  const { files, imports } = graph();
  const definitions = files.filter((f) => f.endsWith('.define.ts'));
  /** What a definition may load when it starts: the other definitions' pieces, commander, the completion hints and help's leaves. */
  const allowed = (module: string) =>
    module.endsWith('.define.ts') ||
    ['src/commands/definition.ts', 'src/commands/call/options.ts', 'src/completion/value-kinds.ts', 'src/help/fit.ts', 'src/help/topics.ts', 'src/terminal/text.ts'].includes(module) ||
    !module.startsWith('src/');

  it('finds the definitions, one file per command', () => {
    expect(definitions.length).toBeGreaterThanOrEqual(19);
    expect(definitions).toContain('src/commands/proxy.define.ts');
  });

  it.each(definitions)('%s loads only definitions and their leaves when it starts', (definition) => {
    const via = loadedBy(definition, imports);
    expect([...via.keys()].filter((m) => !allowed(m)).map((m) => chain(via, m))).toEqual([]);
  });

  it('src/cli.ts loads no run either', () => {
    const via = loadedBy('src/cli.ts', imports);
    expect([...via.keys()].filter((m) => m !== 'src/cli.ts' && m !== 'src/context.ts' && !allowed(m)).map((m) => chain(via, m))).toEqual([]);
  });
});

describe("the session's rooms", () => {
  // src/session/: the front door (index.ts) and the request path (request.ts, response-error.ts, origin-headers.ts)
  // at its root, beside login/ and paging/ and the rooms by concept: profile/ (which profile and base URL, the
  // binding, switch), tokens/ (load, refresh under the lock, store moves and reach, no refresh token, the client
  // secret, the DPoP key), discovery/ (the cache and the resource hints). A room is below the door: it never
  // imports index.ts, nor the flows that use it (login/, paging/).
  const { files, imports } = graph();
  const ROOMS = ['profile', 'tokens', 'discovery'];

  it.each(ROOMS)('src/session/%s/ holds its modules', (room) => {
    expect(files.filter((f) => f.startsWith(`src/session/${room}/`)).length).toBeGreaterThan(0);
  });

  it.each(ROOMS)('src/session/%s/ imports neither the front door nor login/ or paging/', (room) => {
    const wrong = imports.filter(
      (i) => i.from.startsWith(`src/session/${room}/`) && (i.to === 'src/session/index.ts' || i.to.startsWith('src/session/login/') || i.to.startsWith('src/session/paging/')),
    );
    expect(wrong.map((i) => `${i.from}:${i.line} imports '${i.specifier}'`)).toEqual([]);
  });

  it('leaves no module of a room loose at the root', () => {
    const loose = files.filter((f) => /^src\/session\/[^/]+\.ts$/.test(f)).map((f) => f.slice('src/session/'.length)).sort();
    expect(loose.filter((f) => !['platform-profile.ts', 'no-refresh-token.ts', 'discovery-cache.ts', 'profile-names.ts', 'client-secret.ts', 'resource-hint.ts', 'store-reach.ts', 'invocation.ts', 'store-move.ts', 'base-url.ts', 'profile.ts', 'binding.ts', 'switch.ts', 'access.ts'].includes(f))).toEqual(loose);
  });
});

describe('the rule checker itself', () => {
  const files = ['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/commands/x.ts', 'src/oauth/y.ts', 'src/store/z.ts'];
  const known = new Set(files);
  const read = (file: string, text: string) => importsOf(file, text, known);

  it('finds each kind of module reference with its line', () => {
    const text = [
      "import { x } from './b.js';",
      "import type { Y } from './c.js';",
      "export { z } from './commands/x.js';",
      "const m = () => import('./oauth/y.js');",
      "type T = typeof import('./store/z.js');",
      "import fs from 'node:fs';",
    ].join('\n');
    expect(read('src/a.ts', text).map((i) => [i.to, i.line, i.lazy])).toEqual([
      ['src/b.ts', 1, false],
      ['src/c.ts', 2, false],
      ['src/commands/x.ts', 3, false],
      ['src/oauth/y.ts', 4, true],
      ['src/store/z.ts', 5, false],
      ['node:fs', 6, false],
    ]);
  });

  it('names a forbidden arrow, type-only or not, every import of a cycle, and a re-export', () => {
    const imports = [
      ...read('src/commands/x.ts', "import type { S } from '../store/z.js';"),
      ...read('src/oauth/y.ts', "export * from '../store/z.js';"),
      ...read('src/a.ts', "import './b.js';"),
      ...read('src/b.ts', "const a = await import('./a.js');"),
      ...read('src/c.ts', "import './a.js';"),
    ];
    const found = violations(files, imports);
    expect(found.map((v) => v.key)).toEqual([
      'commands → store: src/commands/x.ts → src/store/z.ts',
      'cycle: src/a.ts → src/b.ts',
      'cycle: src/b.ts → src/a.ts',
      'protocol → store: src/oauth/y.ts → src/store/z.ts',
      're-export: src/oauth/y.ts → src/store/z.ts',
    ]);
    expect(found[2]!.detail).toBe("src/b.ts:1 imports './a.js': closes the import cycle src/b.ts → src/a.ts → src/b.ts");
  });

  it('tells type-only imports from the rest', () => {
    const text = [
      "import type { A } from './b.js';",
      "import { type A, type B } from './b.js';",
      "export type { A } from './b.js';",
      "type T = typeof import('./b.js');",
      "import { type A, b } from './b.js';",
      "import b, { type A } from './b.js';",
      "import * as b from './b.js';",
      "import './b.js';",
      "export { b } from './b.js';",
      "const b = () => import('./b.js');",
    ].join('\n');
    expect(read('src/a.ts', text).map((i) => i.typeOnly)).toEqual([true, true, true, true, false, false, false, false, false, false]);
  });

  it('lets commands, the library and completion into the session by its front door only, type-only imports included', () => {
    const withSession = [...files, 'src/session/index.ts', 'src/session/tokens/access.ts', 'src/session/request.ts'];
    const known = new Set(withSession);
    const imports = [
      ...importsOf('src/commands/x.ts', "import { accessToken, type TokenSource } from '../session/index.js';", known),
      ...importsOf('src/commands/x.ts', "import { loadSession } from '../session/tokens/access.js';", known),
      ...importsOf('src/library/w.ts', "import type { ApiRequest } from '../session/request.js';", known),
      ...importsOf('src/completion/candidates.ts', "const { loadSession } = await import('../session/tokens/access.js');", known),
      ...importsOf('src/session/request.ts', "import { loadSession } from './tokens/access.js';", known),
    ];
    expect(violations(withSession, imports).map((v) => v.detail)).toEqual([
      "src/commands/x.ts:1 imports '../session/tokens/access.js': enters the session by a side door: import from its front door, src/session/index.ts (add a verb there if none fits)",
      "src/completion/candidates.ts:1 imports '../session/tokens/access.js': enters the session by a side door: import from its front door, src/session/index.ts (add a verb there if none fits)",
      "src/library/w.ts:1 imports '../session/request.js': enters the session by a side door: import from its front door, src/session/index.ts (add a verb there if none fits)",
    ]);
  });

  it('lets any layer but the protocol use the shapes (src/store/types.ts), and commands nothing else of the store', () => {
    const withTypes = [...files, 'src/store/types.ts', 'src/http/index.ts', 'src/oauth/discovery.ts'];
    const known = new Set(withTypes);
    const imports = [
      ...importsOf('src/commands/x.ts', "import type { Profile } from '../store/types.js';", known),
      ...importsOf('src/commands/x.ts', "import type { Z } from '../store/z.js';", known),
      ...importsOf('src/oauth/y.ts', "import type { Profile } from '../store/types.js';", known),
      ...importsOf('src/completion/candidates.ts', "import { request } from '../http/index.js';", known),
      ...importsOf('src/library/w.ts', "import { discover } from '../oauth/discovery.js';", known),
    ];
    const found = violations(withTypes, imports);
    expect(found.map((v) => v.detail)).toEqual([
      "src/completion/candidates.ts:1 imports '../http/index.js': a Tab press stays offline",
      "src/commands/x.ts:1 imports '../store/z.js': commands go through the session",
      "src/library/w.ts:1 imports '../oauth/discovery.js': the library goes through the session",
      "src/oauth/y.ts:1 imports '../store/types.js': the protocol returns its own types: the session maps them to what it stores",
    ]);
  });
});
