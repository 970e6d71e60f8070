package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/internal/fusetest"
	meshserve "github.com/meshfs/meshfs/serve"
	"github.com/meshfs/meshfs/vfs"
)

// startServe runs `meshfs serve` with args (SOURCE last) on a free
// loopback port and returns its URL (no trailing slash); the test's end
// stops it.
func startServe(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(meshfsBin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	l := readyLine(t, cmd, out, &stderr)
	m := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)/ `).FindStringSubmatch(l)
	if m == nil {
		t.Fatalf("meshfs serve %v: %q\n%s", args, l, stderr.String())
	}
	return m[1]
}

// needClient ends the test unless program is installed (under CI it
// fails: .ci/setup's CLIENTS=1 installs them).
func needClient(t testing.TB, program string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		decodetest.CannotRun(t, "no %s (apt-get install %s): %v", program, program, err)
	}
}

// testdataDir is the repository's testdata/.
func testdataDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.Abs("../../testdata")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// rcloneCheck runs `rclone check --download` of the local folder local
// against the WebDAV server at url and fails t unless it finds 0
// differences in more than min files.
func rcloneCheck(t *testing.T, local, url string, min int) {
	t.Helper()
	cmd := exec.Command("rclone", "check", "--download", "--config", "/dev/null", "--webdav-url", url,
		"--checkers", "4", local, ":webdav:")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rclone check %s %s: %v\n%s", local, url, err, out)
	}
	m := regexp.MustCompile(`(\d+) matching files`).FindSubmatch(out)
	if !bytes.Contains(out, []byte(" 0 differences found")) || m == nil {
		t.Fatalf("rclone check %s %s:\n%s", local, url, out)
	}
	var n int
	fmt.Sscan(string(m[1]), &n)
	if n < min {
		t.Errorf("rclone check matched %d files, want at least %d:\n%s", n, min, out)
	}
}

// countFiles is the number of regular files under dir.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// TestServeRcloneEqualsMount: rclone's WebDAV backend lists and downloads
// what `meshfs serve testdata` shows exactly as a FUSE mount of testdata
// shows it (`rclone check --download`: 0 differences, every file of the
// mount matched); so does the door over the mount folder itself (vfs.Dir).
func TestServeRcloneEqualsMount(t *testing.T) {
	needClient(t, "rclone")
	src := testdataDir(t)
	mnt := mountDir(t)
	startMount(t, "--no-disk-cache", src, mnt)
	files := countFiles(t, mnt)
	if files < 100 {
		t.Fatalf("the mount shows %d files", files)
	}
	fusetest.Watchdog(t, mnt, func() {
		t.Run("tree", func(t *testing.T) {
			rcloneCheck(t, mnt, startServe(t, "--no-disk-cache", src), files)
		})
		t.Run("mount-folder", func(t *testing.T) {
			d, err := vfs.Dir(mnt)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(meshserve.New(d, meshserve.Config{}))
			defer srv.Close()
			rcloneCheck(t, mnt, srv.URL, files)
		})
	})
}

// grepHeaders is `grep -r --include=header.json -n PATTERN .` in dir,
// sorted.
func grepHeaders(t *testing.T, dir, pattern string) []string {
	t.Helper()
	cmd := exec.Command("grep", "-r", "--include=header.json", "-n", pattern, ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("grep in %s: %v", dir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	sort.Strings(lines)
	return lines
}

// TestServeDavfs2: davfs2 mounts what `meshfs serve testdata` serves, and
// `grep -r --include=header.json` finds in it what it finds in a FUSE
// mount of testdata, line for line.
func TestServeDavfs2(t *testing.T) {
	needClient(t, "mount.davfs")
	if os.Geteuid() != 0 {
		decodetest.CannotRun(t, "mount.davfs needs root here")
	}
	src := testdataDir(t)
	mnt := mountDir(t)
	startMount(t, "--no-disk-cache", src, mnt)
	url := startServe(t, "--no-disk-cache", src)

	dav := mountDir(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "davfs2.conf")
	// buf_size 64: davfs2 1.6's default (16 KiB) makes Linux 6.16 and
	// later fail every readdir with EINVAL (davfs2 issue 22).
	if err := os.WriteFile(conf, []byte("use_locks 0\nask_auth 0\nbuf_size 64\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mount := exec.Command("mount.davfs", url+"/", dav, "-o", "ro,conf="+conf)
	mount.Stdin = strings.NewReader("\n\n")
	if out, err := mount.CombinedOutput(); err != nil {
		t.Fatalf("mount.davfs: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dav).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", dav, err, out)
		}
	})
	fusetest.Watchdog(t, mnt, func() {
		for _, pattern := range []string{`"vertices"`, `"format"`} {
			want := grepHeaders(t, mnt, pattern)
			got := grepHeaders(t, dav, pattern)
			if len(want) < 10 || strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("grep %s: %d lines in davfs2, %d in the FUSE mount; first differing:\n%s", pattern, len(got), len(want), firstDiff(got, want))
			}
		}
	})
}

func firstDiff(a, b []string) string {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			x, y := "", ""
			if i < len(a) {
				x = a[i]
			}
			if i < len(b) {
				y = b[i]
			}
			return fmt.Sprintf("  davfs2: %s\n  mount:  %s", x, y)
		}
	}
	return ""
}

// freePort is a loopback port free now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// NginxCacheConf is the proxy_cache configuration DESIGN.md shows (Serve),
// with the test's folders and ports: %[1]s the folder, %[2]d nginx's port,
// %[3]s meshfs serve's address. What it keeps: 200 and 206 answers for as
// long as Cache-Control lets it, revalidated with If-None-Match after.
const NginxCacheConf = `
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    proxy_cache_path %[1]s/cache levels=1:2 keys_zone=meshfs:10m max_size=10g inactive=7d use_temp_path=off;
    server {
        listen 127.0.0.1:%[2]d;
        location / {
            proxy_pass http://%[3]s;
            proxy_http_version 1.1;
            proxy_cache meshfs;
            proxy_cache_revalidate on;
            proxy_cache_lock on;
            proxy_cache_use_stale updating error timeout;
            proxy_cache_methods GET HEAD;
            add_header X-Cache-Status $upstream_cache_status always;
        }
    }
}
`

// startNginx runs Debian's nginx on a free loopback port with
// NginxCacheConf in front of upstream (HOST:PORT); it returns nginx's URL.
func startNginx(t testing.TB, dir, upstream string) string {
	t.Helper()
	needClient(t, "nginx")
	port := freePort(t)
	conf := filepath.Join(dir, "nginx.conf")
	c := fmt.Sprintf(NginxCacheConf, dir, port, upstream)
	if os.Geteuid() == 0 {
		c = "user root;\n" + c // its workers read the test's folders
	}
	if err := os.WriteFile(conf, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("nginx", "-p", dir, "-c", conf, "-g", "daemon off;")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT)
		cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(guard)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return url
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx not listening after %v: %v\n%s%s", guard, err, stderr.String(), b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeNginxCache: Debian's nginx with the proxy_cache configuration
// of DESIGN.md in front of `meshfs serve`: the first GET of a .glb is a
// MISS, the second a HIT, both the bytes meshfs serves; a HEAD, and a
// range, are served from the cache too.
func TestServeNginxCache(t *testing.T) {
	src := testdataDir(t)
	url := startServe(t, "--no-disk-cache", src)
	dir := t.TempDir()
	front := startNginx(t, dir, strings.TrimPrefix(url, "http://"))
	const name = "/tfever/tf2_cube.msh/tf2_cube.glb"
	direct := get(t, url+name, nil)
	for i, want := range []string{"MISS", "HIT"} {
		resp := get(t, front+name, nil)
		if got := resp.Header.Get("X-Cache-Status"); got != want {
			t.Errorf("GET %d through nginx: X-Cache-Status %q, want %s", i+1, got, want)
		}
		if resp.body != direct.body || resp.Header.Get("ETag") != direct.Header.Get("ETag") {
			t.Errorf("GET %d through nginx: %d bytes, ETag %q; meshfs: %d, %q", i+1, len(resp.body), resp.Header.Get("ETag"),
				len(direct.body), direct.Header.Get("ETag"))
		}
	}
	r := get(t, front+name, http.Header{"Range": {"bytes=4-11"}})
	if r.StatusCode != 206 || r.body != direct.body[4:12] || r.Header.Get("X-Cache-Status") != "HIT" {
		t.Errorf("a range through nginx: %d, %q, %s", r.StatusCode, r.body, r.Header.Get("X-Cache-Status"))
	}
}

type response struct {
	*http.Response
	body string
}

func get(t testing.TB, url string, h http.Header) response {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 && resp.StatusCode != 206 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return response{resp, string(b)}
}
