#!/usr/bin/env bash
# Lists the Go packages under guest/ and examples/ whose wasip1 build
# (GOOS=wasip1 GOARCH=wasm: the guest SDK and the examples' guests) includes
# files that the host build does not, so `make vet` can vet them for that
# target: `go vet ./...` on the host never sees those files.
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=()
for d in guest examples; do
	[[ -d "$d" ]] && dirs+=("./$d/...")
done
((${#dirs[@]})) || exit 0
format='{{.ImportPath}} {{join .GoFiles ","}}'
# Packages whose files all exclude a target are left out by go list's
# pattern matching; real errors are left for go vet to report.
host=$(go list -e -f "$format" "${dirs[@]}" 2>/dev/null || true)
wasm=$(GOOS=wasip1 GOARCH=wasm go list -e -f "$format" "${dirs[@]}" 2>/dev/null || true)
# A package whose wasip1 file list is not exactly its host file list.
comm -13 <(LC_ALL=C sort <<<"$host") <(LC_ALL=C sort <<<"$wasm") | cut -d' ' -f1
