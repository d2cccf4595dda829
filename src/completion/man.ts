/**
 * plat(1), rendered from the same program description as the completions (commands, options, examples), plus the
 * contract's environment, files and exit codes. `npm run build` writes it to dist/plat.1.
 */
import type { CommandSpec, OptionSpec, ProgramSpec } from './model.js';

const ENVIRONMENT: Array<[string, string]> = [
  ['PLAT_BASE_URL', 'The platform\'s origin (https, or http on loopback only); same as --base-url.'],
  ['PLAT_PROFILE', 'The profile to use (default "default"); same as --profile.'],
  ['PLAT_CONFIG_DIR', 'Where non-secret state lives (default $XDG_CONFIG_HOME/plat, ~/.config/plat).'],
  ['PLAT_TOKEN_STORE', '"keychain" (only the OS keychain), "file" (a 0600 file), unset: the keychain with a file fallback. For new sessions; a stored session is read where it is and moved, once, to the store named.'],
  ['PLAT_TOKEN', 'A bearer token used instead of any stored session (for CI); never stored.'],
  ['PLAT_BROWSER, BROWSER', 'A command that opens URLs; the URL is appended as its last argument.'],
  ['PLAT_DEBUG', 'Set to 1 for the same trace as --verbose.'],
  ['NO_COLOR, FORCE_COLOR', 'Colour conventions; without FORCE_COLOR there is no colour off a terminal.'],
  ['HTTPS_PROXY, HTTP_PROXY, NO_PROXY', 'Proxies, for every request.'],
  ['NODE_EXTRA_CA_CERTS', 'A file with the certificate of a private CA.'],
];

const EXIT_STATUS: Array<[string, string]> = [
  ['0', 'Success (for call: a 2xx or 3xx response).'],
  ['1', 'Other failures: an HTTP error from call (the body is still printed), a server that breaks the protocol, a busy --port, local storage errors.'],
  ['2', 'Usage: an unknown command or option, a bad value.'],
  ['3', 'Network: unreachable, DNS, TLS, timeout.'],
  ['4', 'Authentication: not logged in, a token rejected after one refresh, a rejected refresh token, consent denied, a state or iss mismatch.'],
  ['5', 'Insufficient scope: stderr names the scope and the plat login --add-scope that adds it.'],
  ['130', 'Interrupted (Ctrl-C).'],
];

const FILES: Array<[string, string]> = [
  ['$PLAT_CONFIG_DIR/profiles/NAME.json', 'A profile: base URL, issuer, client registration, user, scopes, expiry (no secrets).'],
  ['$PLAT_CONFIG_DIR/cache/', 'Discovery metadata and the API description (/openapi.json), kept for an hour.'],
  ['$PLAT_CONFIG_DIR/tokens/NAME.json', 'Tokens, only when the 0600 file is used instead of the OS keychain.'],
];

/** Escapes roff: backslashes, a leading dot or quote, and option dashes (minus signs, not hyphens). */
function roff(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .replace(/(?<![A-Za-z0-9])-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1')
    .replace(/[^\x00-\x7f]/gu, (c) => `\\[u${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}
const flagText = (flag: string) => `\\fB${flag.replace(/-/g, '\\-')}\\fR`;

function optionItem(o: OptionSpec): string {
  const flags = [o.short, o.long].filter((f): f is string => Boolean(f)).map(flagText).join(', ');
  const value = o.takesValue ? ` \\fI${roff(o.valueName ?? 'value')}\\fR` : '';
  return `.TP\n${flags}${value}\n${roff(o.description)}`;
}

function synopsis(c: CommandSpec): string {
  const args = c.args.map((a) => (a.required ? `\\fI${a.name}\\fR` : `[\\fI${a.name}\\fR]`)).join(' ');
  const options = c.options.some((o) => o.long !== '--help') ? ' [\\fIoptions\\fR]' : '';
  return `\\fBplat ${c.name}\\fR${options}${args ? ` ${args}` : ''}`;
}

function commandSection(c: CommandSpec): string {
  const parts = [`.SS ${c.name}`, `${synopsis(c)}`, '.br', roff(c.description)];
  for (const a of c.args) parts.push(`.TP\n\\fI${a.name}\\fR\n${roff(a.description)}`);
  for (const o of c.options) if (o.long !== '--help') parts.push(optionItem(o));
  if (c.examples.length > 0) {
    parts.push('.PP\nExamples:\n.RS\n.nf', ...c.examples.map((e) => `$ ${roff(e)}`), '.fi\n.RE');
  }
  return parts.join('\n');
}

function table(rows: Array<[string, string]>, bold = true): string {
  return rows.map(([k, v]) => `.TP\n${bold ? `\\fB${roff(k)}\\fR` : roff(k)}\n${roff(v)}`).join('\n');
}

/** `packageName`: the npm package plat is installed from (package.json's name), not the command's name. */
export function renderMan(program: ProgramSpec, version: string, packageName = 'plat-cli'): string {
  const groups = [...new Set(program.commands.map((c) => c.group))];
  return [
    `.\\" plat(1). Generated from plat's command definitions by src/build/man.mjs; do not edit.`,
    `.TH PLAT 1 "" "plat ${roff(version)}" "User Commands"`,
    '.SH NAME',
    `plat \\- ${roff(program.description.replace(/\.$/, ''))}`,
    '.SH SYNOPSIS',
    '\\fBplat\\fR [\\fIglobal options\\fR] \\fIcommand\\fR [\\fIoptions\\fR]',
    '.SH DESCRIPTION',
    'plat signs you in to the learning platform\'s API with OAuth 2.0 and OpenID Connect (discovery, dynamic client',
    'registration, the authorization code flow with PKCE in your browser), keeps the tokens in the OS keychain,',
    'refreshes them before they expire, revokes them at logout, and calls the API from a terminal or a script.',
    'Results go to stdout; progress, notes, warnings and errors to stderr.',
    '.PP',
    `plat is installed from npm as the package \\fB${roff(packageName)}\\fR (\\fBnpm i \\-g ${roff(packageName)}\\fR, or`,
    `\\fBnpx ${roff(packageName)}\\fR without installing); the command it installs is \\fBplat\\fR. The same package is a Node`,
    `library that uses the session plat keeps: \\fBimport { createClient } from '${roff(packageName)}'\\fR.`,
    '.PP',
    'The journey:',
    '.RS\n.nf',
    '$ plat login \\-\\-base\\-url https://school.example.com \\-\\-scope courses:read',
    '$ plat whoami',
    '$ plat call GET /api/courses | jq .',
    '$ plat logout',
    '.fi\n.RE',
    '.SH GLOBAL OPTIONS',
    'Accepted before or after the command.',
    ...program.globalOptions.map(optionItem),
    '.SH COMMANDS',
    ...groups.flatMap((group) => [
      `.PP\n\\fB${roff(group)}\\fR`,
      ...program.commands.filter((c) => c.group === group).map(commandSection),
    ]),
    '.SH ENVIRONMENT',
    table(ENVIRONMENT),
    '.SH FILES',
    table(FILES),
    'Secrets (access, refresh and ID tokens, a client secret) are kept in the OS keychain (service "plat") or',
    'in the tokens/ file, nowhere else.',
    '.SH EXIT STATUS',
    table(EXIT_STATUS),
    '.PP',
    '\\fBplat exec\\fR exits with its command\'s status instead: 128 + n when signal n ended it, 127 when the command was',
    'not found, 126 when it could not be run; the codes above when plat fails before the command starts.',
    '.SH SEE ALSO',
    'README.md in the package, the complete reference; \\fBplat completion\\fR \\fIbash\\fR|\\fIzsh\\fR|\\fIfish\\fR for shell completions.',
    '',
  ].join('\n');
}
