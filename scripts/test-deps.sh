#!/usr/bin/env bash
# What the test suite needs beyond PyPI, installed by `make test` itself on a fresh machine:
# Debian packages (as root, through apt-get) and npm packages (into .cache/npm, never global).
# Best effort: anything that can't be had is reported here, and the tests that need it skip
# with a printed reason. Quick when everything is already there.
set -u
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  # "debian-package:command-that-proves-it-is-there", one a line, with the tests that need it
  "chromium:chromium"  # tests/ui/test_ui_browser.py, driven by the playwright PyPI package
  "git:git"  # tests/integration/test_context_here.py: memory context --here in a real repo
  "tmux:tmux"  # tests/integration/test_cli_tmux.py: human output in a real 100-column pane
  # tests/contract/test_postgres_store.py, tests/integration/test_postgres_daemons.py: a
  # throwaway server (tests/support/postgres_server.py); pg_ctlcluster proves the server
  "postgresql:pg_ctlcluster"
)
NPM_PACKAGES=(
  # name@version, with the tests that need it
  "@anthropic-ai/claude-code@2.1.197"  # tests/integration/test_harness_clis.py
  "@openai/codex@0.171.0"              # tests/integration/test_harness_clis.py
  "opencode-ai@1.18.33"                # tests/integration/test_harness_clis.py
)

# The peer tools venom-mem imports from (tests/integration/test_peer_imports.py, ADR 0040), in
# .cache/peers, apart from the harnesses: server-memory from npm; basic-memory (Python 3.12+)
# and mcp-memory-service (a Python whose sqlite3 loads extensions) each in its own venv.
PEER_NPM="@modelcontextprotocol/server-memory@2026.8.31"
PEER_PYPI=(
  "bm-venv:basic-memory:python3.13 python3.12 $HOME/.pyenv/versions/3.1[2-9]*/bin/python"
  "mms-venv:mcp-memory-service==12.4.0:/usr/bin/python3.11 python3.11 python3"
)

missing_apt=()
for spec in "${APT_PACKAGES[@]}"; do
  pkg=${spec%%:*}
  probe=${spec#*:}
  command -v "$probe" >/dev/null 2>&1 || missing_apt+=("$pkg")
done
if [ ${#missing_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test-deps: apt-get install ${missing_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get -o DPkg::Lock::Timeout=600 update -qq &&
      apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing_apt[@]}"; } \
      >/tmp/venom-mem-test-deps-apt.log 2>&1 ||
      echo "test-deps: apt-get failed (see /tmp/venom-mem-test-deps-apt.log); those tests will skip"
  else
    echo "test-deps: not root or no apt-get: ${missing_apt[*]} unavailable; those tests will skip"
  fi
fi

if [ ${#NPM_PACKAGES[@]} -gt 0 ]; then
  if command -v npm >/dev/null 2>&1; then
    mkdir -p .cache/npm
    want=$(printf '%s\n' "${NPM_PACKAGES[@]}" | sort | tr '\n' ' ')
    if [ "$(cat .cache/npm/.installed 2>/dev/null)" != "$want" ]; then
      echo "test-deps: npm install ${want}"
      if (cd .cache/npm && [ -f package.json ] || echo '{"private":true}' > package.json &&
          npm install --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}") \
          >/tmp/venom-mem-test-deps-npm.log 2>&1; then
        echo "$want" > .cache/npm/.installed
      else
        echo "test-deps: npm install failed (see /tmp/venom-mem-test-deps-npm.log); those tests will skip"
      fi
    fi
  else
    echo "test-deps: no npm on this machine; the tests that need npm packages will skip"
  fi
fi
mkdir -p .cache/peers/npm
if command -v npm >/dev/null 2>&1; then
  if [ "$(cat .cache/peers/npm/.installed 2>/dev/null)" != "$PEER_NPM" ]; then
    echo "test-deps: npm install $PEER_NPM (into .cache/peers/npm)"
    if (cd .cache/peers/npm && { [ -f package.json ] || echo '{"private":true}' > package.json; } &&
        npm install --no-audit --no-fund --loglevel=error "$PEER_NPM") \
        >/tmp/venom-mem-test-deps-peers-npm.log 2>&1; then
      echo "$PEER_NPM" > .cache/peers/npm/.installed
    else
      echo "test-deps: npm install $PEER_NPM failed; test_peer_imports uses its committed fixture"
    fi
  fi
fi
for spec in "${PEER_PYPI[@]}"; do
  venv=${spec%%:*}
  rest=${spec#*:}
  package=${rest%%:*}
  pythons=${rest#*:}
  [ "$(cat ".cache/peers/$venv/.installed" 2>/dev/null)" = "$package" ] && continue
  found=""
  for python in $pythons; do
    command -v "$python" >/dev/null 2>&1 || continue
    if [ "$venv" = bm-venv ]; then
      probe='import sys; sys.exit(sys.version_info < (3, 12))'
    else
      probe='import sqlite3; sqlite3.connect(":memory:").enable_load_extension(True)'
    fi
    if "$python" -c "$probe" >/dev/null 2>&1; then
      found=$python
      break
    fi
  done
  if [ -z "$found" ]; then
    echo "test-deps: no suitable Python for $package; test_peer_imports uses its committed fixture"
    continue
  fi
  echo "test-deps: pip install $package (into .cache/peers/$venv, $found)"
  rm -rf ".cache/peers/$venv"
  if "$found" -m venv ".cache/peers/$venv" &&
     ".cache/peers/$venv/bin/pip" install --quiet "$package" >/tmp/venom-mem-test-deps-$venv.log 2>&1; then
    echo "$package" > ".cache/peers/$venv/.installed"
  else
    echo "test-deps: pip install $package failed (see /tmp/venom-mem-test-deps-$venv.log)"
    rm -rf ".cache/peers/$venv"
  fi
done
exit 0
