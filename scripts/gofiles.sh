#!/usr/bin/env bash
# Lists the repository's Go source files (for gofmt), skipping .git, bin/,
# node_modules/ and testdata/ directories. third_party/ is included: the
# vendored go-capnp is gofmt-formatted too (third_party/go-capnp/PATCHES.md).
set -euo pipefail
cd "$(dirname "$0")/.."
find . \( -name .git -o -name bin -o -name node_modules -o -name testdata \) -prune -o \
	-name '*.go' -type f -print | sed 's|^\./||' | LC_ALL=C sort
