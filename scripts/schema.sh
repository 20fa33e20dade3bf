#!/usr/bin/env bash
# Regenerates, or checks, the committed Go code generated from .capnp files.
#
#   scripts/schema.sh gen      rewrite every generated *.capnp.go in place
#   scripts/schema.sh check    regenerate into a temporary directory and fail
#                              if any committed file differs or is missing
#
# Which files: every .capnp in the repository (outside .git, bin, node_modules
# and testdata) that carries a $Go.import annotation. Files are compiled one directory at a time with
# --src-prefix=<dir>, so each generated file lands next to its source and the
# names baked into it ("workspace.capnp:Gateway") do not depend on where the
# repository is checked out. Imports resolve from the repository's root
# (import "/schema/gatekeeper.capnp") and from go-capnp's std (go.capnp).
#
# A gatekeeper kind's schema (a .capnp under gatekeepers/) is also compiled
# to schema.bin beside it: the serialized CodeGeneratorRequest (capnp
# compile -o-, as a blueprint's schema.bin) that the kind embeds and serves.
# Only one such .capnp per directory. Needs capnp and capnpc-go
# (scripts/deps.sh).
#
# Beside each NAME.capnp.go, capnpc-gadget (internal/cmd/capnpc-gadget,
# built here from this checkout) writes NAME.capnp.sync.go: the synchronous
# client stubs (FooSync) of internal/syncgen, for files that declare an
# interface.
set -euo pipefail

mode=${1:-}
case "$mode" in
gen | check) ;;
*)
	echo "usage: $0 gen|check" >&2
	exit 2
	;;
esac

cd "$(dirname "$0")/.."

for tool in capnp capnpc-go; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "schema.sh: $tool not found on PATH; run scripts/deps.sh (and put \$(go env GOPATH)/bin on PATH)" >&2
		exit 1
	fi
done

std="$(go list -m -f '{{.Dir}}' capnproto.org/go/capnp/v3)/std"
if [[ ! -f "$std/go.capnp" ]]; then
	echo "schema.sh: go.capnp not found in $std (is capnproto.org/go/capnp/v3 in go.mod and downloaded? try: go mod download)" >&2
	exit 1
fi

# The .capnp files that generate Go, grouped by directory.
mapfile -t files < <(
	find . \( -name .git -o -name bin -o -name node_modules -o -name testdata -o -path ./third_party \) -prune -o \
		-name '*.capnp' -type f -exec grep -l '^[[:space:]]*[$]Go[.]import' {} + |
		sed 's|^\./||' | LC_ALL=C sort
)
if ((${#files[@]} == 0)); then
	echo "schema.sh: no .capnp file with \$Go.import in the repository" >&2
	exit 1
fi
mapfile -t dirs < <(printf '%s\n' "${files[@]}" | xargs -n1 dirname | LC_ALL=C sort -u)

out=.
gentmp=$(mktemp -d)
trap 'rm -rf "$gentmp"' EXIT
if [[ "$mode" == check ]]; then
	out="$gentmp/out"
	mkdir -p "$out"
fi
gadgetgen="$gentmp/capnpc-gadget"
if ! go build -o "$gadgetgen" ./internal/cmd/capnpc-gadget; then
	echo "schema.sh: building internal/cmd/capnpc-gadget failed" >&2
	exit 1
fi

bins=() # the schema.bin files made
for dir in "${dirs[@]}"; do
	srcs=()
	for f in "${files[@]}"; do
		[[ "$(dirname "$f")" == "$dir" ]] && srcs+=("$f")
	done
	mkdir -p "$out/$dir"
	# A file that lost its last interface must lose its stubs too.
	for f in "${srcs[@]}"; do
		rm -f "$out/$f.sync.go"
	done
	if ! capnp compile -I"$std" -I. -ogo:"$out/$dir" -o"$gadgetgen":"$out/$dir" --src-prefix="$dir" "${srcs[@]}"; then
		echo "schema.sh: capnp compile failed for ${srcs[*]}" >&2
		exit 1
	fi
	# capnpc-go serves a method inherited from an interface of another Go
	# package with an unkeyed literal (schema.Gatekeeper_describe{call}),
	# which go vet's composites check refuses; key it.
	(cd "$out" && sed -i -E 's/^(\t+return s\.[A-Za-z0-9_]+\(ctx, [A-Za-z0-9_]+\.[A-Za-z0-9_]+)\{call\}\)$/\1{Call: call})/' \
		"${srcs[@]/%/.go}")
	[[ "$mode" == gen ]] && echo "generated Go for: ${srcs[*]}"
	if [[ "$dir" == gatekeepers/* ]]; then
		if ((${#srcs[@]} != 1)); then
			echo "schema.sh: $dir has ${#srcs[@]} .capnp files; a gatekeeper kind's directory has one (its schema.bin)" >&2
			exit 1
		fi
		if ! capnp compile -I"$std" -I. -o- --src-prefix="$dir" "${srcs[0]}" >"$out/$dir/schema.bin"; then
			echo "schema.sh: capnp compile -o- failed for ${srcs[0]}" >&2
			exit 1
		fi
		bins+=("$dir/schema.bin")
		[[ "$mode" == gen ]] && echo "compiled $dir/schema.bin"
	fi
done

if [[ "$mode" == check ]]; then
	stale=()
	for f in "${files[@]}"; do
		g="$f.go"
		if [[ ! -f "$g" ]]; then
			echo "schema.sh: $g is missing" >&2
			stale+=("$g")
		elif ! cmp -s "$out/$g" "$g"; then
			echo "schema.sh: $g differs from what $f generates:" >&2
			diff -u "$g" "$out/$g" | head -n 40 >&2 || true
			stale+=("$g")
		fi
		# The stubs: present exactly when generated, and the same.
		g="$f.sync.go"
		if [[ -f "$out/$g" && ! -f "$g" ]]; then
			echo "schema.sh: $g is missing" >&2
			stale+=("$g")
		elif [[ ! -f "$out/$g" && -f "$g" ]]; then
			echo "schema.sh: $g is no longer generated from $f (delete it)" >&2
			stale+=("$g")
		elif [[ -f "$g" ]] && ! cmp -s "$out/$g" "$g"; then
			echo "schema.sh: $g differs from what $f generates:" >&2
			diff -u "$g" "$out/$g" | head -n 40 >&2 || true
			stale+=("$g")
		fi
	done
	for b in "${bins[@]}"; do
		if [[ ! -f "$b" ]]; then
			echo "schema.sh: $b is missing" >&2
			stale+=("$b")
		elif ! cmp -s "$out/$b" "$b"; then
			echo "schema.sh: $b differs from what $(dirname "$b")/*.capnp compiles to" >&2
			stale+=("$b")
		fi
	done
	# Generated files whose source is gone (or lost its $Go.import).
	declare -A known=()
	for f in "${files[@]}"; do
		known[$f]=1
	done
	while IFS= read -r g; do
		src=${g%.go}
		src=${src%.sync}
		if [[ -z "${known[$src]:-}" ]]; then
			echo "schema.sh: $g has no matching .capnp with \$Go.import (delete it?)" >&2
			stale+=("$g")
		fi
	done < <(
		find . \( -name .git -o -name bin -o -name node_modules -o -name testdata -o -path ./third_party \) -prune -o \
			\( -name '*.capnp.go' -o -name '*.capnp.sync.go' \) -type f -print | sed 's|^\./||' | LC_ALL=C sort
	)
	if ((${#stale[@]})); then
		echo "generated code is stale: run make schema (stale: ${stale[*]})" >&2
		exit 1
	fi
	echo "schema-check: ${#files[@]} generated files and ${#bins[@]} schema.bin are up to date"
fi
