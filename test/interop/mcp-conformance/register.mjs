// node --import ./register.mjs: serves fs.globSync to @modelcontextprotocol/conformance on Node 20 (hooks.mjs).
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
