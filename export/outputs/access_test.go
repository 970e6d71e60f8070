package outputs_test

import (
	"context"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

func TestNarrow(t *testing.T) {
	const root, alice, bob = 0, 1000, 1001
	const wheel, users, staff = 0, 100, 50
	for _, c := range []struct {
		name  string
		files []outputs.Access
		want  outputs.Access
	}{
		{"none", nil, outputs.Access{}},
		{"one file is itself", []outputs.Access{{alice, users, 0o640}}, outputs.Access{alice, users, 0o640}},
		{"mode 000", []outputs.Access{{root, wheel, 0}}, outputs.Access{root, wheel, 0}},
		{"type and special bits dropped", []outputs.Access{{root, wheel, 0o104755}}, outputs.Access{root, wheel, 0o755}},
		{"same owner and group: each class ANDed",
			[]outputs.Access{{alice, users, 0o644}, {alice, users, 0o600}}, outputs.Access{alice, users, 0o600}},
		{"same owner and group, companion wider",
			[]outputs.Access{{alice, users, 0o640}, {alice, users, 0o666}}, outputs.Access{alice, users, 0o640}},
		{"companion 0600 root beside a 0644 mesh of root",
			[]outputs.Access{{root, wheel, 0o644}, {root, wheel, 0o600}}, outputs.Access{root, wheel, 0o600}},
		{"companion of another owner, 0600: only that owner could read it, and he may be anyone",
			[]outputs.Access{{alice, users, 0o644}, {root, users, 0o600}}, outputs.Access{alice, users, 0}},
		{"companion of another owner readable by its group (the output's)",
			[]outputs.Access{{alice, users, 0o644}, {bob, users, 0o640}}, outputs.Access{alice, users, 0o040}},
		{"companion of another group readable by its group only",
			[]outputs.Access{{alice, users, 0o644}, {alice, staff, 0o640}}, outputs.Access{alice, users, 0o600}},
		{"companion readable by all",
			[]outputs.Access{{alice, users, 0o640}, {root, staff, 0o444}}, outputs.Access{alice, users, 0o440}},
		{"companion other-only (group excluded)",
			[]outputs.Access{{alice, users, 0o644}, {alice, users, 0o604}}, outputs.Access{alice, users, 0o604}},
		{"three files",
			[]outputs.Access{{alice, users, 0o755}, {alice, users, 0o750}, {alice, users, 0o710}}, outputs.Access{alice, users, 0o710}},
	} {
		if got := outputs.Narrow(c.files...); got != c.want {
			t.Errorf("%s: Narrow(%o) = %+v (%o), want %+v (%o)", c.name, c.files, got, got.Perm, c.want, c.want.Perm)
		}
	}
}

// may is the kernel's permission check (generic_permission without
// capabilities or ACLs): the owner class for the owner, else the group
// class for a member of the file's group, else the other class.
func may(uid uint32, groups map[uint32]bool, a outputs.Access, bit uint32) bool {
	switch {
	case uid == a.Uid:
		return a.Perm&(bit<<6) != 0
	case groups[a.Gid]:
		return a.Perm&(bit<<3) != 0
	}
	return a.Perm&bit != 0
}

// TestNarrowNobodyGainsAccess checks the rule against every user of a small
// world (any uid, any set of groups): whatever the output grants a user,
// every file it was made from grants that user too.
func TestNarrowNobodyGainsAccess(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	ids := []uint32{0, 1, 2}
	for range 20000 {
		n := 1 + rng.Intn(3)
		files := make([]outputs.Access, n)
		for i := range files {
			files[i] = outputs.Access{Uid: ids[rng.Intn(3)], Gid: ids[rng.Intn(3)], Perm: uint32(rng.Intn(0o1000))}
		}
		out := outputs.Narrow(files...)
		if out.Uid != files[0].Uid || out.Gid != files[0].Gid {
			t.Fatalf("Narrow(%o) = %+v: not the main file's owner and group", files, out)
		}
		if n == 1 && out.Perm != files[0].Perm {
			t.Fatalf("Narrow(%o) = %o: one file changed", files, out.Perm)
		}
		for _, uid := range append(ids, 3) {
			for set := range 8 {
				groups := map[uint32]bool{}
				for i, g := range ids {
					if set&(1<<i) != 0 {
						groups[g] = true
					}
				}
				for _, bit := range []uint32{4, 2, 1} {
					if !may(uid, groups, out, bit) {
						continue
					}
					for _, f := range files {
						if !may(uid, groups, f, bit) {
							t.Fatalf("Narrow(%o) = %o grants bit %o to uid %d in groups %v, which %+v does not", files, out.Perm, bit, uid, groups, f)
						}
					}
				}
			}
		}
	}
}

// TestConvertModes: convert's files are readable by others only where
// every source is: a Transport Fever mesh whose .msh.blob is 0600 gives
// 0600 files and 0700 folders, also over an earlier conversion made while
// the blob was readable; a readable pair gives readable outputs.
func TestConvertModes(t *testing.T) {
	src := t.TempDir()
	for _, name := range []string{"tf2_cube.msh", "tf2_cube.msh.blob"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tfever", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	blob := filepath.Join(src, "tf2_cube.msh.blob")
	out := filepath.Join(t.TempDir(), "tf2_cube.msh")
	convert := func() {
		t.Helper()
		m, err := outputs.Open(filepath.Join(src, "tf2_cube.msh"))
		if err != nil || m == nil {
			t.Fatalf("not a mesh: %v", err)
		}
		if err := vfstest.Convert(t, m.Path, &m.Limits, out); err != nil {
			t.Fatal(err)
		}
	}
	modes := func() map[string]os.FileMode { return groupOtherBits(t, out) }
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)

	convert()
	for rel, m := range modes() {
		if m != 0o044 && m != 0o055 {
			t.Errorf("readable sources: %s has group/other bits %o", rel, m)
		}
	}
	if err := os.Chmod(blob, 0o600); err != nil {
		t.Fatal(err)
	}
	convert()
	got := modes()
	if len(got) < 5 {
		t.Fatalf("only %d files written", len(got))
	}
	for rel, m := range got {
		if m != 0 {
			t.Errorf("0600 blob: %s has group/other bits %o", rel, m)
		}
	}
}

// groupOtherBits returns the group and other permission bits of
// everything under out, by path relative to it.
func groupOtherBits(t *testing.T, out string) map[string]os.FileMode {
	t.Helper()
	got := map[string]os.FileMode{}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		rel, _ := filepath.Rel(out, p)
		got[rel] = fi.Mode().Perm() & 0o077
		return nil
	})
	return got
}

// headerDepPaths returns the paths of the dependencies header.json of m
// is made from.
func headerDepPaths(t *testing.T, m *outputs.Mesh) map[string]bool {
	t.Helper()
	st, err := m.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, deps, err := m.HeaderDeps(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	for _, d := range deps {
		set[d.Path] = true
	}
	return set
}
