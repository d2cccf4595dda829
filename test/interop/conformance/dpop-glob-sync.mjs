// Preload (NODE_OPTIONS=--import) for @modelcontextprotocol/conformance on Node 20: its bundle imports
// { globSync } from 'fs', which Node gained in 22. A Node that has it keeps its own and this does nothing. Else
// fs.globSync is defined here as a simple walker, and since a built-in's ES module view keeps the export names
// it had at start-up, a resolve hook hands the bundle's import of 'fs' a module that adds the one name.
import fs from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';

if (typeof fs.globSync !== 'function') {
  const toRegExp = (pattern) => {
    let source = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i];
      if (c === '*' && pattern[i + 1] === '*') {
        source += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
        i += pattern[i + 2] === '/' ? 2 : 1;
      } else if (c === '*') source += '[^/]*';
      else if (c === '?') source += '[^/]';
      else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    return new RegExp(`^${source}$`);
  };
  fs.globSync = function globSync(patterns, options = {}) {
    const cwd = options.cwd ? String(options.cwd) : process.cwd();
    const list = (Array.isArray(patterns) ? patterns : [patterns]).map(String);
    const found = new Set();
    for (const pattern of list) {
      const absolute = path.isAbsolute(pattern);
      const root = absolute ? path.parse(pattern).root : cwd;
      const relativePattern = absolute ? path.relative(root, pattern) : pattern;
      // Walk only below the pattern's fixed leading directories.
      const parts = relativePattern.split(/[\\/]/);
      const fixed = [];
      while (parts.length > 1 && !/[*?[{]/.test(parts[0])) fixed.push(parts.shift());
      const start = path.join(root, ...fixed);
      const matcher = toRegExp(parts.join('/'));
      const walk = (dir, rel) => {
        let entries;
        try {
          entries = fs.readdirSync(dir, { withFileTypes: true });
        } catch {
          return;
        }
        for (const entry of entries) {
          const childRel = rel ? `${rel}/${entry.name}` : entry.name;
          if (matcher.test(childRel)) found.add(absolute ? path.join(start, childRel) : path.join(...fixed, childRel));
          if (entry.isDirectory()) walk(path.join(dir, entry.name), childRel);
        }
      };
      walk(start, '');
    }
    return [...found];
  };
  const facade = "import fs from 'node:fs'; export * from 'node:fs'; export default fs; export const globSync = fs.globSync;";
  const hooks = `export async function resolve(specifier, context, next) {
    if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL && context.parentURL.includes('/@modelcontextprotocol/conformance/')) {
      return { url: ${JSON.stringify(`data:text/javascript,${encodeURIComponent(facade)}`)}, shortCircuit: true };
    }
    return next(specifier, context);
  }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
