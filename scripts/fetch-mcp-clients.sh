#!/bin/sh
# fetch-mcp-clients.sh: install the real MCP clients and servers the tests use
# (scripts/mcp-clients/package.json, pinned) into .tools/mcp-node, once.
# The tests find them there (or at $EXOCORTEX_MCP_NODE) and skip, saying so,
# when node or the packages are absent.
set -eu
cd "$(dirname "$0")/.."
dest=.tools/mcp-node
if ! command -v npm >/dev/null 2>&1; then
	echo "npm not found: the MCP client tests will skip (install Node.js 18 or later)" >&2
	exit 1
fi
mkdir -p "$dest"
if [ -f "$dest/package.json" ] && cmp -s scripts/mcp-clients/package.json "$dest/package.json" && [ -d "$dest/node_modules/@modelcontextprotocol/sdk" ]; then
	exit 0
fi
cp scripts/mcp-clients/package.json "$dest/package.json"
echo "installing the MCP clients and servers for the tests into $dest (npm, once)" >&2
(cd "$dest" && npm install --no-audit --no-fund --loglevel=error)
