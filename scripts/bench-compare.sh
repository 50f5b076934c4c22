#!/usr/bin/env bash
# bench-compare.sh: run the benchmarks of an older commit and of the working tree
# in turns on this machine, and print each benchmark's medians and their ratio, so
# a change that slows the hook path is seen before it lands (`make bench-compare`).
#
# The test binary of REF is built in a temporary git worktree (removed after), the
# other from the working tree (or from NEW when given). Each round runs every
# selected benchmark once on each side, alternating which side goes first, each
# benchmark in its own process; a ratio is new/old, the median of the per-round
# ratios (the machine's neighbours move both sides of a round alike). For
# "Nx" bench times the CPU of the whole process tree (the test binary and the
# plugin processes it starts) per op is measured too, as the difference between
# a run of N and one of N/10 ops, which cancels the set-up (plugin starts), the
# go command's own CPU left out (benchmarks build their plugins with `go build`:
# a go on PATH that records its CPU stands in front of the real one):
# `cpu-µs/op`, steadier than wall time on a shared machine.
#
# usage: scripts/bench-compare.sh [flags] REF [NEW]
#   --bench REGEX     benchmarks (go test -bench syntax; default BENCH or
#                     '^(BenchmarkExtensionCall|BenchmarkIteration40)$')
#   --count N         rounds (default COUNT or 5)
#   --benchtime T     per run (default BENCHTIME or 2000x)
#   --pkg PKG         package (default PKG or ./core/loop)
#   --json            one JSON object on stdout instead of the table
#   --no-cpu          skip the N/10 runs (no cpu-µs/op)
#   -h, --help        this text
# Progress goes to stderr. Exit status 0, or 2 for bad usage, 1 for a failed
# build or run. Example: make bench-compare REF=79a7384 COUNT=7
set -euo pipefail

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }

bench="${BENCH:-^(BenchmarkExtensionCall|BenchmarkIteration40)\$}"
count="${COUNT:-5}"
benchtime="${BENCHTIME:-2000x}"
pkg="${PKG:-./core/loop}"
json=0 cpu=1
args=()
while [[ $# -gt 0 ]]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	--bench) bench="$2"; shift 2 ;;
	--count) count="$2"; shift 2 ;;
	--benchtime) benchtime="$2"; shift 2 ;;
	--pkg) pkg="$2"; shift 2 ;;
	--json) json=1; shift ;;
	--no-cpu) cpu=0; shift ;;
	-*) echo "bench-compare: unknown flag $1 (see --help)" >&2; exit 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
if [[ ${#args[@]} -lt 1 || ${#args[@]} -gt 2 ]]; then
	echo "bench-compare: give the git ref to compare against, e.g. scripts/bench-compare.sh 79a7384 (see --help)" >&2
	exit 2
fi
ref="${args[0]}" newref="${args[1]:-}"
if ! [[ "$count" =~ ^[1-9][0-9]*$ ]]; then
	echo "bench-compare: --count $count: want a whole number of rounds, e.g. 5" >&2
	exit 2
fi
small=""
if [[ "$benchtime" =~ ^([0-9]+)x$ ]]; then
	n="${BASH_REMATCH[1]}"
	small=$((n / 10))
	[[ $small -lt 1 ]] && cpu=0
else
	cpu=0
fi

root="$(git rev-parse --show-toplevel)"
for r in "$ref" ${newref:+"$newref"}; do
	git -C "$root" rev-parse --verify --quiet "$r^{commit}" >/dev/null || {
		echo "bench-compare: $r is not a commit in $root (a branch, tag or hash)" >&2
		exit 2
	}
done
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX")"
cleanup() {
	for d in "$tmp/old" "$tmp/new"; do
		[[ -d "$d" ]] && git -C "$root" worktree remove --force "$d" >/dev/null 2>&1
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
say() { echo "bench-compare: $*" >&2; }

git -C "$root" worktree add --quiet --detach "$tmp/old" "$ref"
olddir="$tmp/old" newdir="$root"
if [[ -n "$newref" ]]; then
	git -C "$root" worktree add --quiet --detach "$tmp/new" "$newref"
	newdir="$tmp/new"
fi
oldname="$(git -C "$olddir" rev-parse --short HEAD)"
newname="${newref:-working tree}"
[[ -n "$newref" ]] && newname="$(git -C "$newdir" rev-parse --short HEAD)"
declare -A dir=([old]="$olddir" [new]="$newdir")
for side in old new; do
	say "building the $side test binary of $pkg (${dir[$side]})"
	(cd "${dir[$side]}" && go test -c -o "$tmp/$side.test" "$pkg") >&2 || {
		say "the $side build failed"
		exit 1
	}
done

# The leaf benchmarks both sides have, each run in a process of its own.
list() {
	(cd "${dir[$1]}/$pkg" && "$tmp/$1.test" -test.run '^$' -test.bench "$bench" -test.benchtime 1x 2>&1) |
		awk '/^Benchmark[^ \t]*[ \t]+[0-9]+/ { n = $1; sub(/-[0-9]+$/, "", n); print n }' | sort -u
}
say "listing the benchmarks matching $bench"
leaves="$(comm -12 <(list old) <(list new))"
if [[ -z "$leaves" ]]; then
	say "no benchmark matching $bench runs on both sides"
	exit 1
fi
say "$(echo "$leaves" | wc -l) benchmarks: $(echo $leaves)"

# leafRegex turns Name/sub into ^Name$/^sub$, metacharacters quoted.
leafRegex() {
	local out="" part
	IFS=/ read -ra parts <<<"$1"
	for part in "${parts[@]}"; do
		part="$(printf '%s' "$part" | sed 's/[][\\.^$*+?(){}|]/\\&/g')"
		out+="${out:+/}^${part}\$"
	done
	printf '%s' "$out"
}

# The go command the benchmarks' plugin builds run, timed so its CPU is left out.
realgo="$(command -v go)"
mkdir -p "$tmp/gobin"
printf '#!/bin/sh\nexec /usr/bin/time -a -o "${GOCPU_FILE:-/dev/null}" -f "go %%U %%S" "%s" "$@"\n' "$realgo" >"$tmp/gobin/go"
chmod +x "$tmp/gobin/go"

data="$tmp/data"
: >"$data"
load_start="$(uptime | sed 's/.*load average: //')"
# run SIDE LEAF ROUND BENCHTIME: appends "round side leaf metric value" lines,
# echoes the process tree's CPU seconds.
run() {
	local side="$1" leaf="$2" round="$3" bt="$4" re out
	re="$(leafRegex "$leaf")"
	: >"$tmp/gocpu"
	out="$(cd "${dir[$side]}/$pkg" && PATH="$tmp/gobin:$PATH" GOCPU_FILE="$tmp/gocpu" /usr/bin/time -f 'cpu %U %S' -o "$tmp/time" \
		"$tmp/$side.test" -test.run '^$' -test.bench "$re" -test.benchtime "$bt" 2>&1)" || {
		say "$side $leaf failed:"
		echo "$out" >&2
		exit 1
	}
	if [[ "$bt" == "$benchtime" ]]; then
		echo "$out" | awk -v r="$round" -v s="$side" -v l="$leaf" '
			/^Benchmark[^ \t]*[ \t]+[0-9]+/ { for (i = 3; i < NF; i += 2) print r, s, l, $(i + 1), $i }' >>"$data"
	fi
	awk '/^cpu/ { t = $2 + $3 } /^go / { g += $2 + $3 } END { print t - g }' "$tmp/time" "$tmp/gocpu"
}
for ((r = 1; r <= count; r++)); do
	order="old new"
	((r % 2 == 0)) && order="new old"
	say "round $r of $count ($order; load $(uptime | sed 's/.*load average: //'))"
	while IFS= read -r leaf; do
		for side in $order; do
			big="$(run "$side" "$leaf" "$r" "$benchtime")"
			if [[ $cpu -eq 1 ]]; then
				little="$(run "$side" "$leaf" "$r" "${small}x")"
				awk -v r="$r" -v s="$side" -v l="$leaf" -v b="$big" -v t="$little" -v n="$n" -v m="$small" \
					'BEGIN { printf "%s %s %s cpu-µs/op %.2f\n", r, s, l, (b - t) * 1e6 / (n - m) }' >>"$data"
			fi
		done
	done <<<"$leaves"
done
load_end="$(uptime | sed 's/.*load average: //')"

# Medians per side, and the median of the per-round ratios new/old.
awk -v json="$json" -v oldname="$oldname" -v newname="$newname" -v bench="$bench" \
	-v count="$count" -v benchtime="$benchtime" -v pkg="$pkg" -v l0="$load_start" -v l1="$load_end" '
function median(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function jstr(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
{
	key = $3 SUBSEP $4
	if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
	v[$2, key, $1] = $5
}
END {
	if (json) printf "{\"old\":%s,\"new\":%s,\"pkg\":%s,\"bench\":%s,\"count\":%d,\"benchtime\":%s,\"load_start\":%s,\"load_end\":%s,\"results\":[", jstr(oldname), jstr(newname), jstr(pkg), jstr(bench), count, jstr(benchtime), jstr(l0), jstr(l1)
	else {
		printf "old %s, new %s; %d rounds of %s in turns; load %s -> %s\n", oldname, newname, count, benchtime, l0, l1
		printf "%-48s %-12s %12s %12s %8s %17s\n", "benchmark", "metric", "old median", "new median", "ratio", "ratio range"
	}
	for (k = 1; k <= nk; k++) {
		split(keys[k], kk, SUBSEP)
		no = nn = nr = 0; delete a; delete b; delete c
		lo = 1e300; hi = -1e300
		for (r = 1; r <= count; r++) {
			ho = (("old", keys[k], r) in v); hn = (("new", keys[k], r) in v)
			if (ho) a[++no] = v["old", keys[k], r]
			if (hn) b[++nn] = v["new", keys[k], r]
			if (ho && hn && v["old", keys[k], r] > 0) {
				x = v["new", keys[k], r] / v["old", keys[k], r]; c[++nr] = x
				if (x < lo) lo = x; if (x > hi) hi = x
			}
		}
		mo = no ? median(a, no) : 0; mn = nn ? median(b, nn) : 0; mr = nr ? median(c, nr) : 0
		if (json) printf "%s{\"benchmark\":%s,\"metric\":%s,\"old_median\":%g,\"new_median\":%g,\"ratio\":%.4f,\"ratio_min\":%.4f,\"ratio_max\":%.4f,\"rounds\":%d}", (k > 1 ? "," : ""), jstr(kk[1]), jstr(kk[2]), mo, mn, mr, (nr ? lo : 0), (nr ? hi : 0), nr
		else printf "%-48s %-12s %12.4g %12.4g %8.3f %8.3f-%-8.3f\n", kk[1], kk[2], mo, mn, mr, (nr ? lo : 0), (nr ? hi : 0)
	}
	if (json) print "]}"
}' "$data"
