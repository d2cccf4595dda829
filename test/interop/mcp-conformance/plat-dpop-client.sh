#!/bin/bash
# The MCP conformance suite's client command for its auth/dpop and auth/dpop-nonce scenarios: plat as a person uses
# it, against $1 (the MCP endpoint): plat login --base-url <endpoint> (the suite's authorization server approves at
# once: the address plat prints is fetched and its redirect followed to plat's listener), then plat call POST with
# the JSON-RPC bodies in a file (initialize, notifications/initialized, tools/list). Not run by the suite: the
# conformance package is not a dependency. By hand (Node 20 lacks fs.globSync, which its dist/index.js imports
# and these scenarios never call: replace that import with a stub in a scratch install):
#
#   npm install --prefix /tmp/conf @modelcontextprotocol/conformance@0.2.0-alpha.12
#   sed -i '2s/import{existsSync as i,globSync as a,/const a=()=>[];import{existsSync as i,/' \
#     /tmp/conf/node_modules/@modelcontextprotocol/conformance/dist/index.js
#   node /tmp/conf/node_modules/@modelcontextprotocol/conformance/dist/index.js client \
#     --command "$PWD/test/interop/mcp-conformance/plat-dpop-client.sh" --scenario auth/dpop      # then auth/dpop-nonce
#
# Measured on 2026-12-02: auth/dpop 12/12, auth/dpop-nonce 14/14.
set -u
url="$1"
plat="node $(cd "$(dirname "$0")/../../.." && pwd)/bin/plat.js"
home=$(mktemp -d)
export HOME="$home" PLAT_CONFIG_DIR="$home/config" PLAT_TOKEN_STORE=file XDG_CACHE_HOME="$home/cache"
err="$home/login.err"
mkfifo "$home/in"; exec 3<>"$home/in"
$plat login --base-url "$url" --no-browser 2>"$err" <"$home/in" &
pid=$!
for i in $(seq 1 200); do
  auth=$(grep -o 'http://[^ ]*/authorize?[^ ]*' "$err" | head -1)
  [ -n "$auth" ] && break
  sleep 0.05
done
curl -sL -o /dev/null "$auth"
wait $pid || { cat "$err" >&2; exit 1; }
exec 3>&-
h=(-H 'Accept: application/json, text/event-stream' -H 'Content-Type: application/json')
body() { printf '%s' "$1" > "$home/body.json"; echo "$home/body.json"; }
init=$($plat call POST "$url" -i "${h[@]}" --input "$(body '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"plat","version":"1"}}}')") || { echo "$init" >&2; exit 1; }
sid=$(printf '%s' "$init" | grep -i '^mcp-session-id:' | tr -d '\r' | awk '{print $2}')
[ -n "$sid" ] && h+=(-H "Mcp-Session-Id: $sid")
$plat call POST "$url" "${h[@]}" --input "$(body '{"jsonrpc":"2.0","method":"notifications/initialized"}')" >/dev/null || true
$plat call POST "$url" "${h[@]}" --input "$(body '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')" || exit 1
$plat status >&2
rm -rf "$home"
