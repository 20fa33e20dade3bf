#!/usr/bin/env bash
# Builds, or checks, what web/js commits: the JS bindings of gadgetd's schema
# (src/schema/*.js) and the bundles the server embeds (web/static/gadgetd.js,
# web/static/frame.js).
#
#   web/js/build.sh build    regenerate the bindings, then the bundles
#   web/js/build.sh check    build into a temporary directory and fail if a
#                            committed file differs (make js-check, make test)
#
# Needs capnp, Go (to find go-capnp's go.capnp), node and web/js/node_modules
# (scripts/deps.sh runs npm ci). Running gadgetd needs none of this: the
# bundles are committed.
set -euo pipefail

mode=${1:-}
case "$mode" in
build | check) ;;
*)
	echo "usage: $0 build|check" >&2
	exit 2
	;;
esac

cd "$(dirname "$0")"
say() { echo "web/js/build.sh: $*" >&2; }

for tool in capnp node go; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		say "$tool not found on PATH; run scripts/deps.sh"
		exit 1
	fi
done
if [[ ! -f node_modules/.package-lock.json ]]; then
	say "web/js/node_modules is missing; run scripts/deps.sh (it runs npm ci)"
	exit 1
fi

std="$(cd ../.. && go list -m -f '{{.Dir}}' capnproto.org/go/capnp/v3)/std"

# bindings OUTDIR DIR FILE...: compile the schema FILEs of DIR (relative to
# the repository root) into OUTDIR; names are taken relative to DIR.
bindings() {
	local out=$1 dir=$2
	shift 2
	local srcs=()
	for f in "$@"; do srcs+=("../../$dir/$f"); done
	capnp compile -I"$std" -o- --src-prefix="../../$dir" "${srcs[@]}" | node build.mjs gen "$out" >/dev/null
}

# generate JSDIR STATICDIR: everything generated, into JSDIR (standing for
# web/js) and STATICDIR (for web/static). The bundles are built from the
# committed sources in web/js/src, so check compares the bindings and the
# bundles separately.
generate() {
	bindings "$1/src/schema" schema workspace.capnp gadget.capnp gatekeeper.capnp
	node build.mjs bundle "$2"
}

if [[ "$mode" == build ]]; then
	generate . ../static
	echo "web/js/build.sh: built web/js/src/schema, web/static/{gadgetd,frame}.js"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
generate "$tmp" "$tmp/static"
stale=0
compare() { # compare GENERATED COMMITTED
	if [[ ! -f "$2" ]]; then
		say "$2 is missing"
		stale=1
	elif ! cmp -s "$1" "$2"; then
		say "$2 is stale"
		stale=1
	fi
}
for f in "$tmp"/src/schema/*.js; do compare "$f" "src/schema/$(basename "$f")"; done
for f in gadgetd.js frame.js; do compare "$tmp/static/$f" "../static/$f"; done
if [[ "$stale" == 1 ]]; then
	say "the committed JS differs from what its sources build; run make js and commit the result"
	exit 1
fi
echo "js-check: the committed bindings and bundles are up to date"
