/**
 * The reference by topic, as gh's help topics: `plat help <topic>` prints one, `plat help` lists them, and `man plat`
 * has a section for each. This index is all that every start carries (the root help lists it); each topic's text is
 * src/help/topics/<name>.md, which the build copies to dist/help/ and only `plat help <topic>` and the man page's
 * build read.
 */
export interface HelpTopic {
  name: string;
  /** Other names `plat help` accepts for it (never a command's name: `plat help <command>` is that command's help). */
  aliases: readonly string[];
  /** Its line in `plat help`'s list. */
  summary: string;
  /** The section of man plat that holds it (the man page's usual names where one fits). */
  manSection: string;
}

/** In the order of the list and of the man page's sections. */
export const HELP_TOPICS: readonly HelpTopic[] = [
  { name: 'sign-in', aliases: ['signin', 'logging-in'], summary: 'how plat login works; SSH, device codes, step-up, accounts', manSection: 'SIGNING IN' },
  { name: 'sessions', aliases: ['profiles'], summary: 'profiles, refresh, status, switch and logout in depth', manSection: 'SESSIONS' },
  { name: 'requests', aliases: ['pagination', 'paginate', 'jq'], summary: 'call, api and op in depth: retries, pages, --jq, checks', manSection: 'REQUESTS' },
  { name: 'scripting', aliases: ['json', 'ci', 'library'], summary: 'output, --json shapes, CI, batch; token, exec, library', manSection: 'SCRIPTING' },
  { name: 'agents', aliases: ['model-context-protocol'], summary: 'plat mcp: the API as tools for AI agents', manSection: 'AGENTS' },
  { name: 'security', aliases: ['servers'], summary: 'the security model; the servers plat is proven against', manSection: 'SECURITY' },
  { name: 'environment', aliases: ['env', 'proxies'], summary: 'environment variables, proxies and private CAs', manSection: 'ENVIRONMENT' },
  { name: 'files', aliases: ['storage'], summary: 'where profiles, tokens and caches are kept', manSection: 'FILES' },
  { name: 'exit-codes', aliases: ['exit-status'], summary: 'what each exit code means', manSection: 'EXIT STATUS' },
  { name: 'troubleshooting', aliases: [], summary: 'keychains, SSH, ports, TLS, scopes, completions', manSection: 'TROUBLESHOOTING' },
];

export function findTopic(name: string): HelpTopic | undefined {
  return HELP_TOPICS.find((topic) => topic.name === name || topic.aliases.includes(name));
}

/** The root help's list of topics. */
export function topicList(): string {
  const width = Math.max(...HELP_TOPICS.map((t) => t.name.length)) + 2;
  return HELP_TOPICS.map((t) => `  ${t.name.padEnd(width)}${t.summary}`).join('\n');
}
