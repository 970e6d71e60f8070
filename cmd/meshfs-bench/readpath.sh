#!/usr/bin/env bash
# readpath.sh: which of the module's packages a cold first read of one
# .glb through the mount runs code of (issue 28's "read path"). It builds
# meshfs with coverage counters, mounts a fixture twice on empty caches,
# lists the mesh folder in both runs and reads its .glb in the second, and
# prints, per package, the statements the second ran more often than the
# first: what the read added. Usage: readpath.sh [MESH] (default: a GEM
# fixture with textures).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mesh=${1:-$root/testdata/gem/eply_tangents_textures.ply}
w=$(mktemp -d)
trap 'fusermount3 -u "$w/mnt" 2>/dev/null || true; rm -rf "$w"' EXIT
(cd "$root" && go build -cover -covermode=atomic -coverpkg=./... -o "$w/meshfs" ./cmd/meshfs)
mkdir -p "$w/src" "$w/mnt"
name=$(basename "$mesh")
cp "$mesh" "$w/src/$name"
glb="${name%.*}.glb"
run() {
  mkdir -p "$w/cov$1"
  GOCOVERDIR="$w/cov$1" "$w/meshfs" mount --cache-dir "$w/cache$1" "$w/src" "$w/mnt" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 50); do mountpoint -q "$w/mnt" && break; sleep 0.1; done
  ls "$w/mnt" "$w/mnt/$name" >/dev/null
  [ "$1" = B ] && cat "$w/mnt/$name/$glb" >/dev/null
  sleep 0.5 # the disk tier's save, when readers pause
  fusermount3 -u "$w/mnt"
  wait "$pid" || true
  go tool covdata textfmt -i="$w/cov$1" -o "$w/$1.txt"
}
run A
run B
python3 - "$w/A.txt" "$w/B.txt" <<'PY'
import sys
def counts(p):
    d = {}
    for l in open(p):
        if not l.startswith("mode"):
            k, _, c = l.rsplit(" ", 2)
            d[k] = int(c)
    return d
a, b = counts(sys.argv[1]), counts(sys.argv[2])
pk = {}
for k, c in b.items():
    if c > a.get(k, 0):
        p = k.split(":")[0].rsplit("/", 1)[0].replace("github.com/meshfs/meshfs/", "")
        pk[p] = pk.get(p, 0) + 1
for p, n in sorted(pk.items(), key=lambda x: -x[1]):
    print(f"{n:6d} {p}")
print(f"{len(pk)} packages")
PY
