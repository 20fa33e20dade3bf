#!/usr/bin/env bash
# Lists the repository's Go source files (for gofmt), skipping .git, bin/,
# node_modules/, testdata/ and third_party/ (vendored, kept as upstream
# wrote it, see third_party/go-capnp/PATCHES.md) directories.
set -euo pipefail
cd "$(dirname "$0")/.."
find . \( -name .git -o -name bin -o -name node_modules -o -name testdata -o -path ./third_party \) -prune -o \
	-name '*.go' -type f -print | sed 's|^\./||' | LC_ALL=C sort
