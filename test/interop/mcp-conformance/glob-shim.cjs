/**
 * A stand-in for fs.globSync (Node 22) on Node 20: a plain walker that matches `*`, `**` and `?`, enough for the
 * patterns @modelcontextprotocol/conformance uses. fs-shim.mjs serves it to that package (hooks.mjs). Test code
 * only; plat never loads it.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

function toRegExp(pattern) {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      // `**/` matches any number of directories, none included.
      if (pattern[i + 2] === '/') {
        source += '(?:.*/)?';
        i += 2;
      } else {
        source += '.*';
        i += 1;
      }
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

function walk(root, relative, out) {
  let entries;
  try {
    entries = fs.readdirSync(path.join(root, relative), { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const name = relative ? `${relative}/${entry.name}` : entry.name;
    out.push(name);
    if (entry.isDirectory() && entry.name !== 'node_modules') walk(root, name, out);
  }
}

module.exports = fs.globSync ?? function globSync(patterns, options = {}) {
    const cwd = options.cwd ? String(options.cwd) : process.cwd();
    const list = Array.isArray(patterns) ? patterns : [patterns];
    const found = new Set();
    for (const pattern of list) {
      const absolute = path.isAbsolute(pattern);
      const root = absolute ? '/' : cwd;
      const regex = toRegExp(absolute ? pattern.slice(1) : pattern);
      const all = [];
      walk(root, '', all);
      for (const name of all) if (regex.test(name)) found.add(absolute ? `/${name}` : name);
    }
    return [...found];
};
