#!/usr/bin/env bash
# Installs what `make test` (and `make run`, `make schema`) needs, and nothing
# else. Idempotent: when everything is present it only checks and returns in
# well under a second; `apt-get update` runs only when a package is missing.
#
#   scripts/deps.sh              what make test needs: capnp, libcapnp-dev,
#                                wabt, g++, make, pkg-config, chromium and
#                                firefox-esr (the browser tests drive them
#                                headless over CDP and WebDriver BiDi, so no
#                                chromedriver or geckodriver), capnpc-go,
#                                gotestsum
#   scripts/deps.sh --run        only what make run needs: capnp and
#                                capnpc-go (blueprint build)
#   scripts/deps.sh --check      install nothing; report what is missing and
#                                exit 1 if anything is
#
# Except with --run, it also installs the JS client's npm packages
# (web/js/package-lock.json, with npm ci) when the lock file changed since
# the last install; that needs node 20+ and npm.
#
# As root it installs Debian packages with apt-get. Otherwise it prints exactly
# which packages are missing and the command that installs them, and exits 1.
# Go tools are installed with `go install` into $(go env GOPATH)/bin as any
# user; the Makefile puts that directory on PATH.
set -euo pipefail

# Pinned versions. capnpc-go must match the capnproto.org/go/capnp/v3 version
# in go.mod, or `make schema` writes code that differs from what is committed.
CAPNPC_GO_VERSION=v3.1.0-alpha.2
GOTESTSUM_VERSION=v1.13.0

# Debian's chromium and firefox-esr, never a downloaded browser:
# web/browsertest runs them.
APT_CORE=(capnproto libcapnp-dev wabt g++ make pkg-config chromium firefox-esr)

check_only=0
run_only=0
for arg in "$@"; do
	case "$arg" in
	--run) run_only=1 ;;
	--check) check_only=1 ;;
	-h | --help)
		sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "deps.sh: unknown argument: $arg (try --help)" >&2
		exit 2
		;;
	esac
done

say() { echo "deps.sh: $*" >&2; }

if ! command -v go >/dev/null 2>&1; then
	say "go is not on PATH. Install Go 1.26 (https://go.dev/dl/) and put its bin/ directory on PATH."
	exit 1
fi

# --- Go tools ----------------------------------------------------------------

gobin=$(go env GOBIN)
[[ -n "$gobin" ]] || gobin="$(go env GOPATH)/bin"

# has_go_tool BIN MODULE VERSION: BIN exists in $gobin and was built from
# MODULE at VERSION.
has_go_tool() {
	[[ -x "$gobin/$1" ]] || return 1
	# Captured first: with pipefail, `cmd | grep -q` can fail when grep exits
	# early and cmd dies of SIGPIPE.
	local info
	info=$(go version -m "$gobin/$1" 2>/dev/null) || return 1
	grep -qE "^[[:space:]]+mod[[:space:]]+$2[[:space:]]+$3([[:space:]]|\$)" <<<"$info"
}

# go_tool BIN MODULE VERSION PACKAGE
go_tool() {
	if has_go_tool "$1" "$2" "$3"; then
		return 0
	fi
	if [[ "$check_only" == 1 ]]; then
		say "missing Go tool: $1 $3 (install with: go install $4@$3)"
		go_missing=1
		return 0
	fi
	say "installing $1 $3 into $gobin"
	# Outside the module, so the project's go.mod is neither used nor touched.
	(cd / && GOFLAGS=-mod=mod go install "$4@$3")
	if ! has_go_tool "$1" "$2" "$3"; then
		say "go install $4@$3 did not produce $gobin/$1"
		exit 1
	fi
}

go_missing=0
go_tool capnpc-go capnproto.org/go/capnp/v3 "$CAPNPC_GO_VERSION" capnproto.org/go/capnp/v3/capnpc-go
if [[ "$run_only" != 1 ]]; then
	go_tool gotestsum gotest.tools/gotestsum "$GOTESTSUM_VERSION" gotest.tools/gotestsum
fi

# --- Debian packages -------------------------------------------------------

want=("${APT_CORE[@]}")
if [[ "$run_only" == 1 ]]; then
	want=(capnproto)
fi

installed() {
	local status
	status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
	[[ "$status" == *"install ok installed"* ]]
}

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
	for p in "${want[@]}"; do
		installed "$p" || missing+=("$p")
	done
else
	# Not Debian: fall back to looking for the commands and the library.
	command -v capnp >/dev/null 2>&1 || missing+=(capnproto)
	if [[ "$run_only" != 1 ]]; then
		pkg-config --exists capnp-rpc 2>/dev/null || missing+=(libcapnp-dev)
		command -v wasm2wat >/dev/null 2>&1 || missing+=(wabt)
		command -v g++ >/dev/null 2>&1 || missing+=(g++)
		command -v make >/dev/null 2>&1 || missing+=(make)
		command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
		command -v chromium >/dev/null 2>&1 || missing+=(chromium)
		command -v firefox-esr >/dev/null 2>&1 || missing+=(firefox-esr)
	fi
	if ((${#missing[@]})); then
		say "this is not a Debian system; install the equivalents of: ${missing[*]}"
		exit 1
	fi
fi

if ((${#missing[@]})); then
	if [[ "$check_only" == 1 ]]; then
		say "missing Debian packages: ${missing[*]}"
		say "install them with: sudo apt-get install -y ${missing[*]}"
		exit 1
	elif [[ "$(id -u)" != 0 ]]; then
		say "missing Debian packages: ${missing[*]}"
		say "not running as root, so not installing them. Run:"
		say "    sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
		say "or run this script (or make test) as root."
		exit 1
	else
		say "installing Debian packages: ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt_opts=(-o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0 -q)
		apt-get "${apt_opts[@]}" update >/dev/null
		apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}" >/dev/null
		still=()
		for p in "${missing[@]}"; do
			installed "$p" || still+=("$p")
		done
		if ((${#still[@]})); then
			say "apt-get finished but these are still not installed: ${still[*]}"
			exit 1
		fi
	fi
fi

# --- npm packages of the JS client (web/js) -----------------------------------
# npm ci installs exactly what web/js/package-lock.json pins, without running
# install scripts. A stamp in node_modules remembers which lock file it
# installed, so this runs only when the lock changed. make run needs none
# of it: the bundles it serves are committed.

js_missing=0
if [[ "$run_only" != 1 ]]; then
	js_dir="$(cd "$(dirname "$0")/.." && pwd)/web/js"
	stamp="$js_dir/node_modules/.gadgetd-lock.sha256"
	lock_sum=$(sha256sum "$js_dir/package-lock.json" | cut -d' ' -f1)
	if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$lock_sum" ]]; then
		if ! command -v npm >/dev/null 2>&1 ||
			! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null; then
			say "node 20 or newer and npm are needed for the JS client's build and tests (make js, make test); install Node.js"
			js_missing=1
		elif [[ "$check_only" == 1 ]]; then
			say "web/js/node_modules is missing or stale (scripts/deps.sh runs npm ci there)"
			js_missing=1
		else
			say "installing the JS client's npm packages (npm ci in web/js)"
			(cd "$js_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
			echo "$lock_sum" >"$stamp"
		fi
	fi
fi

if [[ "$go_missing" == 1 || "$js_missing" == 1 ]]; then
	exit 1
fi

# capnp compile finds the capnpc-go plugin on PATH.
case ":$PATH:" in
*":$gobin:"*) ;;
*) say "note: $gobin is not on your PATH; the Makefile adds it, but for running capnp by hand: export PATH=\"$gobin:\$PATH\"" ;;
esac
