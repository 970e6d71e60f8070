package serve_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/store/stats"
	"github.com/meshfs/meshfs/serve"
	"github.com/meshfs/meshfs/vfs"
)

// The door's benchmarks, each side by side with a server that knows no
// conversion: a warm GET of a 1 M-triangle .glb (36 MiB) against Debian's
// nginx sending a plain file of that size, and a depth-1 PROPFIND of a
// folder of 1 000 entries against `rclone serve webdav` of a plain folder
// of the same shape. Both servers run on loopback, each request on a
// kept-alive connection.

// realTree is vfs.New of src, memory only, unwatched.
func realTree(b *testing.B, src string) vfs.Tree {
	b.Helper()
	t, err := vfs.New(vfs.Config{Source: src, Store: store.Config{CacheSize: 512 << 20}, NoWatch: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(t.Close)
	return t
}

// listening waits until something accepts on addr.
func listening(b *testing.B, addr string, what func() string) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s not listening: %v\n%s", addr, err, what())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freeAddr(b *testing.B) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// run starts a server process until the benchmark ends.
func run(b *testing.B, name string, args ...string) func() string {
	b.Helper()
	if _, err := exec.LookPath(name); err != nil {
		b.Skipf("no %s: %v", name, err)
	}
	cmd := exec.Command(name, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	return out.String
}

func fetch(b *testing.B, c *http.Client, req *http.Request, want int) int64 {
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != want {
		b.Fatalf("%s %s: %d, %v", req.Method, req.URL, resp.StatusCode, err)
	}
	return n
}

// sideBySide runs a and b alternately (a b, then b a, ...) for b.N
// rounds and reports each one's time per call and their ratio: on a
// loaded machine only calls interleaved this way compare.
func sideBySide(b *testing.B, aName string, a func(), bName string, other func()) {
	var ta, tb time.Duration
	timed := func(f func(), d *time.Duration) {
		start := time.Now()
		f()
		*d += time.Since(start)
	}
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			timed(a, &ta)
			timed(other, &tb)
		} else {
			timed(other, &tb)
			timed(a, &ta)
		}
		i++
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(ta.Microseconds())/float64(i), aName+"-µs/op")
	b.ReportMetric(float64(tb.Microseconds())/float64(i), bName+"-µs/op")
	b.ReportMetric(float64(ta)/float64(tb), "×"+bName)
}

// BenchmarkWarmGET: GET of a converted 36 MiB .glb held in memory, and
// nginx's GET of a plain file of the same size (in the page cache), side
// by side.
func BenchmarkWarmGET(b *testing.B) {
	src := b.TempDir()
	data, err := meshgen.GEM(1_000_000, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "big.ply"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	door := httptest.NewServer(serve.New(realTree(b, src), serve.Config{}))
	b.Cleanup(door.Close)
	c := &http.Client{}
	req, _ := http.NewRequest("GET", door.URL+"/big.ply/big.glb", nil)
	size := fetch(b, c, req, 200) // converts

	dir := b.TempDir()
	os.Chmod(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "big.glb"), make([]byte, size), 0o644); err != nil {
		b.Fatal(err)
	}
	addr := freeAddr(b)
	conf := filepath.Join(dir, "nginx.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(`worker_processes 1; pid %[1]s/nginx.pid; error_log %[1]s/error.log;
%[3]s events { worker_connections 64; }
http { access_log off; sendfile on; client_body_temp_path %[1]s/b; proxy_temp_path %[1]s/p;
fastcgi_temp_path %[1]s/f; uwsgi_temp_path %[1]s/u; scgi_temp_path %[1]s/s;
server { listen %[2]s; root %[1]s; } }
`, dir, addr, map[bool]string{true: "user root;", false: ""}[os.Geteuid() == 0])), 0o644)
	out := run(b, "nginx", "-p", dir, "-c", conf, "-g", "daemon off;")
	listening(b, addr, out)
	plain, _ := http.NewRequest("GET", "http://"+addr+"/big.glb", nil)
	fetch(b, c, plain, 200)

	get := func(req *http.Request) func() {
		return func() {
			if n := fetch(b, c, req, 200); n != size {
				b.Fatalf("%d bytes, want %d", n, size)
			}
		}
	}
	b.Run("meshfs", func(b *testing.B) { // alone: for a profile
		b.SetBytes(size)
		for b.Loop() {
			get(req)()
		}
	})
	b.Run("meshfs-vs-nginx", func(b *testing.B) { sideBySide(b, "meshfs", get(req), "nginx", get(plain)) })
}

// BenchmarkPropfind1000: a depth-1 PROPFIND (allprop) of a folder of
// 1 000 entries, warm, side by side with `rclone serve webdav` of a plain
// folder of the same shape: 1 000 meshes (each a folder) against 1 000
// folders of the same names, 1 000 plain files served by each, and those
// files served by meshfs as a plain folder (vfs.Dir). Each shape's
// meshfs sub-benchmark alone is there for a profile.
func BenchmarkPropfind1000(b *testing.B) {
	meshes, folders, files := b.TempDir(), b.TempDir(), b.TempDir()
	for i := range 1000 {
		data, err := meshgen.GEM(12, float32(i))
		if err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("m%04d.ply", i)
		if err := os.WriteFile(filepath.Join(meshes, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(folders, name), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(files, fmt.Sprintf("f%04d.bin", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	c := &http.Client{}
	door := func(t vfs.Tree) string {
		s := httptest.NewServer(serve.New(t, serve.Config{}))
		b.Cleanup(s.Close)
		return s.URL
	}
	rclone := func(dir string) string {
		addr := freeAddr(b)
		out := run(b, "rclone", "serve", "webdav", "--config", "/dev/null", "--read-only", "--addr", addr, dir)
		listening(b, addr, out)
		return "http://" + addr
	}
	plainDir, err := vfs.Dir(files)
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct {
		name  string
		tree  vfs.Tree
		plain string
	}{{"meshes", realTree(b, meshes), folders}, {"files", realTree(b, files), files},
		{"plain-folder-tree", plainDir, files}} {
		ours, theirs := door(shape.tree), rclone(shape.plain)
		propfind := func(url string) func() {
			return func() {
				req, _ := http.NewRequest("PROPFIND", url+"/", nil)
				req.Header.Set("Depth", "1")
				fetch(b, c, req, 207)
			}
		}
		propfind(ours)() // warm
		propfind(theirs)()
		b.Run(shape.name+"/meshfs", func(b *testing.B) {
			for b.Loop() {
				propfind(ours)()
			}
		})
		b.Run(shape.name+"/meshfs-vs-rclone", func(b *testing.B) {
			sideBySide(b, "meshfs", propfind(ours), "rclone", propfind(theirs))
		})
	}
}

// BenchmarkCold32: 32 clients at once GET every .glb of a fresh tree of 8
// meshes (none converted yet), each in its own order; each output is
// converted once for all of them (the store's conversion count), and
// every client gets the same bytes.
func BenchmarkCold32(b *testing.B) {
	const meshes, clients = 8, 32
	src := b.TempDir()
	for i := range meshes {
		data, err := meshgen.GEM(20_000, float32(i))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("m%d.ply", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		b.StopTimer()
		tree, err := vfs.New(vfs.Config{Source: src, Store: store.Config{CacheSize: 512 << 20}, NoWatch: true})
		if err != nil {
			b.Fatal(err)
		}
		door := httptest.NewServer(serve.New(tree, serve.Config{}))
		b.StartTimer()
		sums := make([][meshes]string, clients)
		var wg sync.WaitGroup
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range meshes {
					m := (c + k) % meshes
					resp, err := http.Get(fmt.Sprintf("%s/m%d.ply/m%d.glb", door.URL, m, m))
					if err != nil {
						b.Error(err)
						return
					}
					h := sha256.New()
					io.Copy(h, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("GET m%d.glb: %d", m, resp.StatusCode)
					}
					sums[c][m] = string(h.Sum(nil))
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		st, _ := tree.Parts()
		var conversions int64
		for _, n := range st.Stats(stats.MountCounts{Counts: &stats.Counts{}}).Conversions {
			conversions += n
		}
		if conversions != meshes {
			b.Errorf("%d conversions for %d meshes", conversions, meshes)
		}
		for c := range sums {
			if sums[c] != sums[0] {
				b.Errorf("client %d got other bytes than client 0", c)
			}
		}
		door.Close()
		tree.Close()
		b.StartTimer()
	}
}
