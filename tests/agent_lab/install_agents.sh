#!/usr/bin/env bash
# Install every agent of tests/agent_lab/VERSIONS into a cache folder, never into the
# repository and never globally:
#
#   tests/agent_lab/install_agents.sh /tmp/arbor-agents
#   export ARBOR_AGENT_NODE_MODULES=/tmp/arbor-agents/npm/node_modules
#   export ARBOR_AGENT_VENVS=/tmp/arbor-agents/venvs      # one venv per Python agent
#
# npm packages are installed with --ignore-scripts; then only the install scripts read and
# known to do nothing but link the native binary out of the package's own optional
# dependency are run (claude-code install.cjs, opencode-ai postinstall.mjs, @ampcode/cli
# install.cjs, droid install.js, which falls back to the npm registry). @charmland/crush's
# install.js downloads a release archive from GitHub, which this workplace cannot reach:
# it runs only with ARBOR_LAB_RUN_CRUSH_POSTINSTALL=1; otherwise crush is built with
# `go install` when a go toolchain is on PATH. The Python agents each get a venv of
# their own (their pins conflict), made with the Python the VERSIONS file names.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
dest="${1:?usage: install_agents.sh CACHE_FOLDER}"
mkdir -p "$dest/npm" "$dest/venvs" "$dest/bin"
dest="$(cd "$dest" && pwd)"

npm_specs=()
pypi_lines=()
while read -r registry name version note; do
  case "$registry" in
    npm) npm_specs+=("$name@$version") ;;
    pypi) pypi_lines+=("$name $version ${note:-python3}") ;;
  esac
done < <(grep -v '^\s*#' "$here/VERSIONS" | grep -v '^\s*$')

echo "== npm (${#npm_specs[@]} packages) into $dest/npm"
npm install --prefix "$dest/npm" --ignore-scripts --no-audit --no-fund "${npm_specs[@]}"

modules="$dest/npm/node_modules"
link_native() {  # package folder, script
  if [ -f "$modules/$1/$2" ]; then
    (cd "$modules/$1" && node "$2") || echo "!! $1: $2 failed" >&2
  fi
}
link_native @anthropic-ai/claude-code install.cjs
link_native opencode-ai postinstall.mjs
link_native @ampcode/cli install.cjs
link_native droid install.js

crush_version="$(awk '$2=="@charmland/crush"{print $3}' "$here/VERSIONS")"
if [ "${ARBOR_LAB_RUN_CRUSH_POSTINSTALL:-0}" = 1 ]; then
  link_native @charmland/crush install.js
elif command -v go >/dev/null 2>&1; then
  echo "== crush $crush_version with go install"
  GOBIN="$dest/bin" GOFLAGS=-mod=mod go install "github.com/charmbracelet/crush@v$crush_version" \
    || echo "!! crush: go install failed" >&2
else
  echo "!! crush: no go toolchain and its npm install script downloads from GitHub;" \
       "set ARBOR_LAB_RUN_CRUSH_POSTINSTALL=1 where GitHub is reachable" >&2
fi
# (On the python machine kind neither works: no GitHub, no Go module proxy. See
# docs/agents/crush.md.)

find_python() {  # python3.12 -> an interpreter of that version that really runs
  local want="$1" v="${1#python}" candidate
  for candidate in "$(command -v "$want" 2>/dev/null)" "$HOME"/.pyenv/versions/"$v"*/bin/python3 \
                   /usr/bin/"$want" /usr/local/bin/"$want"; do
    # (a pyenv shim is on PATH even where that version is not selected: try it)
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c "import sys" 2>/dev/null; then
      echo "$candidate"; return
    fi
  done
  return 1
}

for line in "${pypi_lines[@]}"; do
  read -r name version python <<<"$line"
  venv="$dest/venvs/${name%%-*}"          # kimi-cli -> kimi, aider-chat -> aider
  if ! interpreter="$(find_python "$python")"; then
    echo "!! $name: no $python found; skipped" >&2
    continue
  fi
  echo "== $name $version into $venv ($interpreter)"
  [ -x "$venv/bin/python" ] || "$interpreter" -m venv "$venv"
  "$venv/bin/pip" install -q "$name==$version"
done

echo
echo "export ARBOR_AGENT_NODE_MODULES=$modules"
echo "export ARBOR_AGENT_VENVS=$dest/venvs"
