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
exit 0
