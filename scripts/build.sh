#!/usr/bin/env bash
# build.sh: go build a command with a progress line, for `make build` and
# `make run`. The first build compiles every dependency (several minutes on two
# cores), so it says what it is doing and counts the packages compiled (go build
# -v names each one as it finishes) instead of staying silent; a later build, with
# everything cached, prints one line. Compiler errors pass through unchanged and
# the exit status is go build's. The binary is stamped with its commit
# (-buildvcs=auto) for `exocortex --version`.
#
# usage: scripts/build.sh OUTPUT PACKAGE      (e.g. bin/exocortex ./cmd/exocortex)
#        GO=/path/to/go scripts/build.sh ...
set -euo pipefail

if [[ $# -ne 2 || "$1" == -h || "$1" == --help ]]; then
	sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
	[[ $# -eq 2 ]] && exit 0 || exit 2
fi
out="$1" pkg="$2"
go="${GO:-go}"
total="$("$go" list -deps "$pkg" 2>/dev/null | wc -l | tr -d ' ')"
start=$SECONDS
tty=0
[[ -t 1 ]] && tty=1

# go build -v writes each compiled package's import path on its own line, and
# errors as "# pkg" headers and "file:line: message" lines: count the first,
# pass the rest through.
progress() {
	local compiled=0 line
	while IFS= read -r line; do
		if [[ "$line" =~ ^[A-Za-z0-9._/~-]+$ ]]; then
			compiled=$((compiled + 1))
			if [[ $tty -eq 1 ]]; then
				printf '\rbuild: %d of at most %d packages compiled, %d s' "$compiled" "$total" "$((SECONDS - start))"
			elif ((compiled % 100 == 0)); then
				echo "build: $compiled of at most $total packages compiled, $((SECONDS - start)) s"
			fi
			continue
		fi
		[[ $tty -eq 1 && $compiled -gt 0 ]] && printf '\n'
		echo "$line"
	done
	[[ $tty -eq 1 && $compiled -gt 0 ]] && printf '\n'
	echo "$compiled" >"$count"
}

count="$(mktemp)"
trap 'rm -f "$count"' EXIT
echo "build: $out from $pkg: $total packages; a first build compiles them all (several minutes on two cores), a later one only what changed"
set +e
"$go" build -buildvcs=auto -v -o "$out" "$pkg" 2>&1 | progress
status=${PIPESTATUS[0]}
set -e
compiled="$(cat "$count")"
if [[ $status -ne 0 ]]; then
	echo "build: go build $pkg failed (exit $status)" >&2
elif [[ $compiled -eq 0 ]]; then
	echo "build: linked $out in $((SECONDS - start)) s (every package was cached)"
else
	echo "build: built $out in $((SECONDS - start)) s ($compiled packages compiled)"
fi
exit "$status"
