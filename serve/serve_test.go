package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/vfs"
)

// fixture is a plain folder: a file of random bytes, a folder holding a
// text file, a link out of the folder and a FIFO.
func fixture(t *testing.T) (string, []byte) {
	t.Helper()
	root := t.TempDir()
	big := make([]byte, 300_001)
	rand.Read(big)
	must(t, os.WriteFile(filepath.Join(root, "big.bin"), big, 0o644))
	must(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "sub", "a b.txt"), []byte("hello\n"), 0o644))
	must(t, os.Symlink("/etc", filepath.Join(root, "out")))
	return root, big
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func dirTree(t *testing.T, root string) vfs.Tree {
	t.Helper()
	d, err := vfs.Dir(root)
	must(t, err)
	return d
}

// door serves h on a free loopback port until the test ends.
func door(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// reply is one curl exchange.
type reply struct {
	code int
	hdr  http.Header
	body []byte
}

// curl runs curl with args (the URL among them) and returns the last
// response it received.
func curl(t *testing.T, args ...string) reply {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		decodetest.CannotRun(t, "no curl: %v", err)
	}
	dir := t.TempDir()
	hf, bf := filepath.Join(dir, "h"), filepath.Join(dir, "b")
	cmd := exec.Command("curl", append([]string{"-sS", "--path-as-is", "-D", hf, "-o", bf}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("curl %v: %v\n%s", args, err, out)
	}
	raw, err := os.ReadFile(hf)
	must(t, err)
	body, _ := os.ReadFile(bf)
	// The last block of headers (curl writes every response's, e.g. a 100).
	blocks := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(raw), "\r\n", "\n")), "\n\n")
	lines := strings.Split(blocks[len(blocks)-1], "\n")
	f := strings.Fields(lines[0])
	if len(f) < 2 {
		t.Fatalf("curl %v: status line %q", args, lines[0])
	}
	code, _ := strconv.Atoi(f[1])
	hdr := http.Header{}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ":"); ok {
			hdr.Add(k, strings.TrimSpace(v))
		}
	}
	return reply{code, hdr, body}
}

func wantCode(t *testing.T, r reply, code int, what string) {
	t.Helper()
	if r.code != code {
		t.Errorf("%s: status %d, want %d (%s)", what, r.code, code, r.body)
	}
}

// TestHTTPRules checks each HTTP rule of the door with curl: exact bytes
// and length, ETag, Last-Modified, 304s, ranges and If-Range, the
// refusals of writes and of LOCK, infinite PROPFINDs and path escapes.
func TestHTTPRules(t *testing.T) {
	root, big := fixture(t)
	url := door(t, New(dirTree(t, root), Config{}))

	r := curl(t, url+"/big.bin")
	wantCode(t, r, 200, "GET")
	if !bytes.Equal(r.body, big) {
		t.Errorf("GET: %d bytes differ from the file's %d", len(r.body), len(big))
	}
	if got := r.hdr.Get("Content-Length"); got != strconv.Itoa(len(big)) {
		t.Errorf("Content-Length %q, want %d", got, len(big))
	}
	tag, lm := r.hdr.Get("Etag"), r.hdr.Get("Last-Modified")
	if !strings.HasPrefix(tag, `"`) || len(tag) < 10 || lm == "" {
		t.Fatalf("ETag %q, Last-Modified %q", tag, lm)
	}
	if cc := r.hdr.Get("Cache-Control"); cc != "public, max-age=60" {
		t.Errorf("Cache-Control %q", cc)
	}
	if h := curl(t, "-I", url+"/big.bin"); h.code != 200 || h.hdr.Get("Etag") != tag ||
		h.hdr.Get("Content-Length") != strconv.Itoa(len(big)) {
		t.Errorf("HEAD: %d, ETag %q, length %q", h.code, h.hdr.Get("Etag"), h.hdr.Get("Content-Length"))
	}
	wantCode(t, curl(t, "-H", "If-None-Match: "+tag, url+"/big.bin"), 304, "If-None-Match")
	wantCode(t, curl(t, "-H", `If-None-Match: "other"`, url+"/big.bin"), 200, "If-None-Match of another ETag")
	wantCode(t, curl(t, "-H", "If-Modified-Since: "+lm, url+"/big.bin"), 304, "If-Modified-Since")

	r = curl(t, "-r", "1000-1999", url+"/big.bin")
	wantCode(t, r, 206, "Range")
	if !bytes.Equal(r.body, big[1000:2000]) || r.hdr.Get("Content-Range") != fmt.Sprintf("bytes 1000-1999/%d", len(big)) {
		t.Errorf("Range: %d bytes, Content-Range %q", len(r.body), r.hdr.Get("Content-Range"))
	}
	r = curl(t, "-r", "299990-", url+"/big.bin")
	if r.code != 206 || !bytes.Equal(r.body, big[299990:]) {
		t.Errorf("open Range: %d, %d bytes", r.code, len(r.body))
	}
	r = curl(t, "-r", "10-19", "-H", "If-Range: "+tag, url+"/big.bin")
	if r.code != 206 || !bytes.Equal(r.body, big[10:20]) {
		t.Errorf("If-Range of the current ETag: %d, %d bytes", r.code, len(r.body))
	}
	r = curl(t, "-r", "10-19", "-H", `If-Range: "old"`, url+"/big.bin")
	if r.code != 200 || len(r.body) != len(big) {
		t.Errorf("If-Range of an old ETag: %d, %d bytes; want the whole file", r.code, len(r.body))
	}
	wantCode(t, curl(t, "-r", "400000-", url+"/big.bin"), 416, "Range past the end")

	r = curl(t, url+"/sub/a%20b.txt")
	if r.code != 200 || string(r.body) != "hello\n" || r.hdr.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("GET of an escaped name: %d %q %q", r.code, r.body, r.hdr.Get("Content-Type"))
	}
	wantCode(t, curl(t, url+"/nothing"), 404, "a missing name")
	wantCode(t, curl(t, url+"/out"), 403, "a symbolic link")
	wantCode(t, curl(t, url+"/out/passwd"), 404, "a name through a symbolic link")

	o := curl(t, "-X", "OPTIONS", url+"/")
	if o.code != 200 || o.hdr.Get("Dav") != "1" || o.hdr.Get("Allow") != Allowed {
		t.Errorf("OPTIONS: %d, DAV %q, Allow %q", o.code, o.hdr.Get("Dav"), o.hdr.Get("Allow"))
	}
	for _, m := range []string{"PUT", "DELETE", "MKCOL", "MOVE", "COPY", "PROPPATCH"} {
		wantCode(t, curl(t, "-X", m, "-H", "Destination: "+url+"/x", "--data-binary", "x", url+"/big.bin"), 403, m)
	}
	for _, m := range []string{"LOCK", "UNLOCK", "POST", "TRACE"} {
		r := curl(t, "-X", m, "--data-binary", "x", url+"/big.bin")
		wantCode(t, r, 405, m)
		if r.hdr.Get("Allow") != Allowed {
			t.Errorf("%s: Allow %q", m, r.hdr.Get("Allow"))
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "big.bin")); err != nil || !bytes.Equal(b, big) {
		t.Errorf("the source changed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "x")); err == nil {
		t.Errorf("a refused write made a file")
	}

	for _, depth := range []string{"infinity", ""} {
		args := []string{"-X", "PROPFIND", url + "/"}
		if depth != "" {
			args = append(args, "-H", "Depth: "+depth)
		}
		r := curl(t, args...)
		if r.code != 403 || !strings.Contains(string(r.body), "propfind-finite-depth") {
			t.Errorf("PROPFIND Depth %q: %d %s", depth, r.code, r.body)
		}
	}

	for _, p := range []string{"/../etc/passwd", "/sub/../../etc/passwd", "/%2e%2e/etc/passwd", "/sub/%2E%2E/%2e%2e/x",
		"/sub%5c..%5c..%5cetc", "/sub\\a", "/big.bin%00", "/./big.bin"} {
		wantCode(t, curl(t, url+p), 400, "GET "+p)
		wantCode(t, curl(t, "-X", "PROPFIND", "-H", "Depth: 0", url+p), 400, "PROPFIND "+p)
	}
}

// TestPropfind: a depth-1 PROPFIND lists every folder and regular file
// (no link) with exact sizes and the GET's ETag, through the escaped
// names, and a depth-0 one only the folder.
func TestPropfind(t *testing.T) {
	root, big := fixture(t)
	url := door(t, New(dirTree(t, root), Config{}))
	r := curl(t, "-X", "PROPFIND", "-H", "Depth: 1", url+"/")
	if r.code != 207 {
		t.Fatalf("PROPFIND: %d %s", r.code, r.body)
	}
	body := string(r.body)
	tag := curl(t, "-I", url+"/big.bin").hdr.Get("Etag")
	for _, want := range []string{"<D:href>/</D:href>", "<D:href>/big.bin</D:href>", "<D:href>/sub/</D:href>",
		fmt.Sprintf("<D:getcontentlength>%d</D:getcontentlength>", len(big)), "<D:getetag>" + tag + "</D:getetag>",
		"<D:getcontenttype>application/octet-stream</D:getcontenttype>"} {
		if !strings.Contains(body, want) {
			t.Errorf("PROPFIND lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "/out") {
		t.Errorf("PROPFIND lists the symbolic link:\n%s", body)
	}
	r = curl(t, "-X", "PROPFIND", "-H", "Depth: 1", url+"/sub")
	if r.code != 207 || !strings.Contains(string(r.body), "<D:href>/sub/a%20b.txt</D:href>") {
		t.Errorf("PROPFIND /sub: %d %s", r.code, r.body)
	}
	r = curl(t, "-X", "PROPFIND", "-H", "Depth: 0", url+"/sub/")
	if r.code != 207 || strings.Count(string(r.body), "<D:response>") != 1 {
		t.Errorf("PROPFIND depth 0: %d %s", r.code, r.body)
	}
	wantCode(t, curl(t, "-X", "PROPFIND", "-H", "Depth: 0", url+"/missing"), 404, "PROPFIND of a missing name")
}

// counting is a Tree that counts its calls, and says of the files whose
// names end in ".cold" that only a conversion can tell their size (as
// the real tree says of an output not yet made).
type counting struct {
	vfs.Tree
	stats, readdirs, opens atomic.Int64
}

func (c *counting) Stat(ctx context.Context, name string) (vfs.Info, error) {
	c.stats.Add(1)
	return c.Tree.Stat(ctx, name)
}

func (c *counting) ReadDir(ctx context.Context, name string) ([]vfs.Info, error) {
	c.readdirs.Add(1)
	infos, err := c.Tree.ReadDir(ctx, name)
	for i := range infos {
		if strings.HasSuffix(infos[i].Name, ".cold") {
			infos[i].Size = -1
		}
	}
	return infos, err
}

func (c *counting) Open(ctx context.Context, name string) (vfs.File, error) {
	c.opens.Add(1)
	return c.Tree.Open(ctx, name)
}

// TestPropfindCostsOneListing: a depth-1 PROPFIND of a folder of 1 000
// entries asks the tree for one listing and one Stat of the folder, plus
// one Stat of each entry whose size the listing could not tell, and
// opens nothing; with every property asked for (allprop) as with a few.
func TestPropfindCostsOneListing(t *testing.T) {
	root := t.TempDir()
	cold := 0
	for i := range 1000 {
		name := fmt.Sprintf("f%04d.bin", i)
		if i%100 == 0 {
			name, cold = fmt.Sprintf("f%04d.cold", i), cold+1
		}
		must(t, os.WriteFile(filepath.Join(root, name), []byte(name), 0o644))
	}
	c := &counting{Tree: dirTree(t, root)}
	url := door(t, New(c, Config{}))
	for _, body := range []string{"",
		`<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getcontentlength/><D:resourcetype/><D:getetag/></D:prop></D:propfind>`} {
		c.stats.Store(0)
		c.readdirs.Store(0)
		r := curl(t, "-X", "PROPFIND", "-H", "Depth: 1", "--data-binary", body, url+"/")
		if r.code != 207 || strings.Count(string(r.body), "<D:response>") != 1001 {
			t.Fatalf("PROPFIND: %d, %d responses", r.code, strings.Count(string(r.body), "<D:response>"))
		}
		if !strings.Contains(string(r.body), "<D:getcontentlength>10</D:getcontentlength>") {
			t.Errorf("no exact size of a cold entry")
		}
		if c.readdirs.Load() != 1 || c.stats.Load() != int64(1+cold) || c.opens.Load() != 0 {
			t.Errorf("body %q: %d listings, %d stats, %d opens; want 1, %d, 0", body, c.readdirs.Load(), c.stats.Load(), c.opens.Load(), 1+cold)
		}
	}
}

// blocking is a Tree whose Stat of a name starting "slow" waits until
// its context ends or release is closed, saying on entered when it
// starts and on left, with its context's error, when it returns.
type blocking struct {
	vfs.Tree
	release chan struct{}
	entered chan string
	left    chan error
}

func newBlocking(t vfs.Tree) *blocking {
	return &blocking{Tree: t, release: make(chan struct{}), entered: make(chan string, 16), left: make(chan error, 16)}
}

func (b *blocking) Stat(ctx context.Context, name string) (vfs.Info, error) {
	if strings.HasPrefix(name, "slow") {
		b.entered <- name
		select {
		case <-ctx.Done():
			b.left <- ctx.Err()
			return vfs.Info{}, ctx.Err()
		case <-b.release:
			b.left <- nil
		}
	}
	return b.Tree.Stat(ctx, name)
}

// TestQueueFull: with every slot taken by a request waiting on the tree,
// the next gets 503 with Retry-After (curl), a warm request too, and once
// the waits end requests are served again.
func TestQueueFull(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"slow1", "slow2", "warm"} {
		must(t, os.WriteFile(filepath.Join(root, n), []byte(n), 0o644))
	}
	b := newBlocking(dirTree(t, root))
	url := door(t, New(b, Config{Queue: 2}))
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i, n := range []string{"slow1", "slow2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(url + "/" + n)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	<-b.entered
	<-b.entered
	for _, p := range []string{"/warm", "/"} {
		r := curl(t, p[:0]+url+p)
		if r.code != 503 || r.hdr.Get("Retry-After") == "" {
			t.Errorf("GET %s with the queue full: %d, Retry-After %q", p, r.code, r.hdr.Get("Retry-After"))
		}
	}
	r := curl(t, "-X", "PROPFIND", "-H", "Depth: 1", url+"/")
	wantCode(t, r, 503, "PROPFIND with the queue full")
	close(b.release)
	wg.Wait()
	if codes[0] != 200 || codes[1] != 200 {
		t.Errorf("the waiting requests got %v", codes)
	}
	wantCode(t, curl(t, url+"/warm"), 200, "GET once the queue emptied")
}

// TestGoneClient: a client that goes away while its request waits on a
// conversion ends the tree's wait (its context) and frees its slot.
func TestGoneClient(t *testing.T) {
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "slow"), []byte("x"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "warm"), []byte("y"), 0o644))
	b := newBlocking(dirTree(t, root))
	h := New(b, Config{Queue: 1})
	served := make(chan struct{}, 4)
	url := door(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		served <- struct{}{}
	}))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/slow", nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-b.entered
	cancel()
	if err := <-b.left; err == nil {
		t.Errorf("the tree's wait ended by release, not by the client's leaving")
	}
	<-errc
	<-served
	wantCode(t, curl(t, url+"/warm"), 200, "GET after the client left (its slot free)")
}

// TestAuth: with an auth file, a request without a credential gets 401;
// a bearer token is admitted; basic auth is refused over plain HTTP and
// admitted over TLS (curl).
func TestAuth(t *testing.T) {
	root, _ := fixture(t)
	file := filepath.Join(t.TempDir(), "auth")
	must(t, os.WriteFile(file, []byte("# who may\n0123456789abcdef-token\nann:s3cret pass\n"), 0o600))
	a, err := LoadAuth(file)
	must(t, err)
	plain := door(t, New(dirTree(t, root), Config{Auth: a}))
	r := curl(t, plain+"/sub/a%20b.txt")
	if r.code != 401 || r.hdr.Get("Www-Authenticate") != `Bearer realm="meshfs"` {
		t.Errorf("no credential: %d, WWW-Authenticate %q", r.code, r.hdr.Values("Www-Authenticate"))
	}
	wantCode(t, curl(t, "-H", "Authorization: Bearer 0123456789abcdef-token", plain+"/sub/a%20b.txt"), 200, "the token")
	wantCode(t, curl(t, "-H", "Authorization: Bearer 0123456789abcdef-tokeN", plain+"/sub/a%20b.txt"), 401, "another token")
	wantCode(t, curl(t, "-u", "ann:s3cret pass", plain+"/sub/a%20b.txt"), 401, "basic auth over plain HTTP")
	if cc := curl(t, "-H", "Authorization: Bearer 0123456789abcdef-token", plain+"/big.bin").hdr.Get("Cache-Control"); !strings.HasPrefix(cc, "private") {
		t.Errorf("behind auth, Cache-Control %q", cc)
	}

	srv := httptest.NewTLSServer(New(dirTree(t, root), Config{Auth: a, TLS: true}))
	t.Cleanup(srv.Close)
	r = curl(t, "-k", srv.URL+"/sub/a%20b.txt")
	if r.code != 401 || len(r.hdr.Values("Www-Authenticate")) != 2 {
		t.Errorf("TLS, no credential: %d, WWW-Authenticate %q", r.code, r.hdr.Values("Www-Authenticate"))
	}
	wantCode(t, curl(t, "-k", "-u", "ann:s3cret pass", srv.URL+"/sub/a%20b.txt"), 200, "basic auth over TLS")
	wantCode(t, curl(t, "-k", "-u", "ann:wrong", srv.URL+"/sub/a%20b.txt"), 401, "a wrong password")
	wantCode(t, curl(t, "-k", "-u", "bob:s3cret pass", srv.URL+"/sub/a%20b.txt"), 401, "an unknown user")

	must(t, os.Chmod(file, 0o644))
	if _, err := LoadAuth(file); err == nil {
		t.Errorf("an auth file readable by others was accepted")
	}
}

// TestCheckListen: loopback needs nothing; any other address needs auth;
// passwords need TLS; TLS needs a certificate and a key.
func TestCheckListen(t *testing.T) {
	tok := &Auth{tokens: make([][32]byte, 1)}
	pw := &Auth{users: map[string][32]byte{"a": {}}}
	for _, c := range []struct {
		addr      string
		auth      *Auth
		cert, key string
		ok        bool
	}{
		{"127.0.0.1:8080", nil, "", "", true},
		{"localhost:0", nil, "", "", true},
		{"[::1]:8080", nil, "", "", true},
		{"127.0.0.2:8080", nil, "", "", true},
		{":8080", nil, "", "", false},
		{"0.0.0.0:8080", nil, "", "", false},
		{"192.168.1.5:8080", nil, "", "", false},
		{"example.com:80", nil, "", "", false},
		{"0.0.0.0:8080", tok, "", "", true},
		{"0.0.0.0:8080", pw, "", "", false},
		{"0.0.0.0:8443", pw, "c.pem", "k.pem", true},
		{"127.0.0.1:8443", nil, "c.pem", "", false},
		{"nonsense", nil, "", "", false},
	} {
		if err := CheckListen(c.addr, c.auth, c.cert, c.key); (err == nil) != c.ok {
			t.Errorf("CheckListen(%q, tokens %v, passwords %v, %q, %q): %v", c.addr, c.auth != nil && len(c.auth.tokens) > 0,
				c.auth != nil && c.auth.HasPasswords(), c.cert, c.key, err)
		}
	}
}

// TestSlowReaderHoldsNoSlot: a client that has its response's headers but
// reads none of its body holds no slot: with a queue of one, the next
// request is served.
func TestSlowReaderHoldsNoSlot(t *testing.T) {
	root, _ := fixture(t)
	// Far more than loopback's socket buffers hold: the server is still
	// writing the body when the next request comes.
	must(t, os.WriteFile(filepath.Join(root, "huge.bin"), make([]byte, 64<<20), 0o644))
	url := door(t, New(dirTree(t, root), Config{Queue: 1}))
	resp, err := http.Get(url + "/huge.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	r := curl(t, url+"/sub/a%20b.txt")
	if r.code != 200 || string(r.body) != "hello\n" {
		t.Errorf("GET while another client reads nothing of its body: %d %q", r.code, r.body)
	}
}

// TestOtherClassView: without auth the door answers as the other class may
// read (a file others may not read is 403, a folder they may not search
// hides what is below it, also from PROPFIND and the folder page); an
// admitted client reads the daemon user's view.
func TestOtherClassView(t *testing.T) {
	root := t.TempDir()
	must(t, os.Chmod(root, 0o755))
	must(t, os.WriteFile(filepath.Join(root, "open.txt"), []byte("open"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "own.txt"), []byte("own"), 0o600))
	must(t, os.Mkdir(filepath.Join(root, "shut"), 0o700))
	must(t, os.WriteFile(filepath.Join(root, "shut", "in.txt"), []byte("in"), 0o644))
	anon := door(t, New(dirTree(t, root), Config{}))
	wantCode(t, curl(t, anon+"/open.txt"), 200, "a file others may read")
	wantCode(t, curl(t, anon+"/own.txt"), 403, "a file others may not read")
	wantCode(t, curl(t, anon+"/shut/in.txt"), 403, "a file in a folder others may not search")
	wantCode(t, curl(t, "-X", "PROPFIND", "-H", "Depth: 1", anon+"/shut/"), 403, "PROPFIND of a folder others may not search")
	wantCode(t, curl(t, "-H", "Accept: text/html", anon+"/shut/"), 403, "the page of a folder others may not list")

	file := filepath.Join(t.TempDir(), "auth")
	must(t, os.WriteFile(file, []byte("0123456789abcdef-token\n"), 0o600))
	a, err := LoadAuth(file)
	must(t, err)
	admitted := door(t, New(dirTree(t, root), Config{Auth: a}))
	tok := "Authorization: Bearer 0123456789abcdef-token"
	wantCode(t, curl(t, "-H", tok, admitted+"/own.txt"), 200, "an admitted client, a file only the owner reads")
	wantCode(t, curl(t, "-H", tok, admitted+"/shut/in.txt"), 200, "an admitted client, in a folder only the owner searches")
}

// TestFolderGET: a folder's GET that does not ask for HTML (curl's
// */*, none) is its listing as plain text, one percent-encoded name a
// line, a folder's with "/", no link; one that asks for text/html is the
// browser's page; HEAD has the GET's length.
func TestFolderGET(t *testing.T) {
	root, _ := fixture(t)
	url := door(t, New(dirTree(t, root), Config{}))
	for _, c := range []struct{ args []string }{{nil}, {[]string{"-H", "Accept: */*"}}, {[]string{"-H", "Accept:"}},
		{[]string{"-H", "Accept: application/xml, text/plain"}}} {
		r := curl(t, append(c.args, url+"/")...)
		if r.code != 200 || string(r.body) != "big.bin\nsub/\n" || r.hdr.Get("Content-Type") != "text/plain; charset=utf-8" ||
			r.hdr.Get("Vary") != "Accept" {
			t.Errorf("GET / %v: %d %q %q, Vary %q", c.args, r.code, r.body, r.hdr.Get("Content-Type"), r.hdr.Get("Vary"))
		}
	}
	for _, p := range []string{"/sub", "/sub/"} {
		if r := curl(t, url+p); r.code != 200 || string(r.body) != "a%20b.txt\n" {
			t.Errorf("GET %s: %d %q", p, r.code, r.body)
		}
	}
	if h := curl(t, "-I", url+"/"); h.code != 200 || h.hdr.Get("Content-Length") != "13" || h.hdr.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("HEAD /: %d, length %q, type %q", h.code, h.hdr.Get("Content-Length"), h.hdr.Get("Content-Type"))
	}
	r := curl(t, "-H", "Accept: text/html,application/xhtml+xml,*/*;q=0.8", url+"/sub/")
	if r.code != 200 || !strings.HasPrefix(r.hdr.Get("Content-Type"), "text/html") || !strings.Contains(string(r.body), "a b.txt") {
		t.Errorf("GET /sub/ as a browser: %d %q", r.code, r.hdr.Get("Content-Type"))
	}
	wantCode(t, curl(t, url+"/nothing/"), 404, "GET of a missing folder")
}

// multistatus is a 207's body as a WebDAV client parses it.
type multistatus struct {
	XMLName   xml.Name `xml:"DAV: multistatus"`
	Responses []struct {
		Href      string `xml:"DAV: href"`
		Propstats []struct {
			Prop struct {
				Props []struct {
					XMLName xml.Name
					Inner   string `xml:",innerxml"`
				} `xml:",any"`
			} `xml:"DAV: prop"`
			Status string `xml:"DAV: status"`
		} `xml:"DAV: propstat"`
	} `xml:"DAV: response"`
}

// props is each href's properties, by "STATUS LOCAL" ("200 getetag"), with
// their inner XML.
func (m multistatus) props() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, r := range m.Responses {
		out[r.Href] = map[string]string{}
		for _, ps := range r.Propstats {
			code := strings.Fields(ps.Status)[1]
			for _, p := range ps.Prop.Props {
				out[r.Href][code+" "+p.XMLName.Local] = p.Inner
			}
		}
	}
	return out
}

// TestWebDAVClients: what Windows' redirector (OPTIONS, an empty
// PROPFIND body with "translate: f", a PROPFIND of a file, LOCK before an
// edit) and macOS Finder (a prop list with creationdate and the quota
// properties, Depth 0 of the root first) ask, checked with curl: OPTIONS
// says class 1 and MS-Author-Via; every 207 is well-formed XML of
// text/xml with the exact length, the GET's ETag and the folders'
// collection type; a property not kept is in a 404 propstat; LOCK is 405
// (the drive mounts read-only); a file's PROPFIND of depth 0 or 1 is that
// file alone; infinity is 403.
func TestWebDAVClients(t *testing.T) {
	root, big := fixture(t)
	url := door(t, New(dirTree(t, root), Config{}))
	o := curl(t, "-X", "OPTIONS", "-H", "User-Agent: Microsoft-WebDAV-MiniRedir/10.0.19045", url+"/")
	if o.code != 200 || o.hdr.Get("Dav") != "1" || o.hdr.Get("Ms-Author-Via") != "DAV" || o.hdr.Get("Allow") != Allowed {
		t.Errorf("OPTIONS: %d, DAV %q, MS-Author-Via %q, Allow %q", o.code, o.hdr.Get("Dav"), o.hdr.Get("Ms-Author-Via"), o.hdr.Get("Allow"))
	}
	tag := curl(t, "-I", url+"/big.bin").hdr.Get("Etag")
	length := strconv.Itoa(len(big))
	finder := `<?xml version="1.0" encoding="utf-8"?>
<D:propfind xmlns:D="DAV:">
<D:prop>
<D:getlastmodified/>
<D:getcontentlength/>
<D:creationdate/>
<D:resourcetype/>
<D:quota-available-bytes/>
<D:quota-used-bytes/>
</D:prop>
</D:propfind>`
	windows := []string{"-H", "translate: f", "-H", "User-Agent: Microsoft-WebDAV-MiniRedir/10.0.19045", "-H", "Content-Length: 0"}
	propfind := func(depth, p string, args ...string) map[string]map[string]string {
		t.Helper()
		r := curl(t, append(append([]string{"-X", "PROPFIND", "-H", "Depth: " + depth}, args...), url+p)...)
		if r.code != 207 || !strings.HasPrefix(r.hdr.Get("Content-Type"), "text/xml") {
			t.Fatalf("PROPFIND %s depth %s: %d %q %s", p, depth, r.code, r.hdr.Get("Content-Type"), r.body)
		}
		var m multistatus
		if err := xml.Unmarshal(r.body, &m); err != nil {
			t.Fatalf("PROPFIND %s depth %s: %v\n%s", p, depth, err, r.body)
		}
		return m.props()
	}

	got := propfind("0", "/", "--data-binary", finder)
	if len(got) != 1 || got["/"]["200 resourcetype"] != "<D:collection/>" || got["/"]["200 getlastmodified"] == "" ||
		got["/"]["404 quota-used-bytes"] != "" || len(got["/"]) != 6 {
		t.Errorf("Finder's depth 0 of /: %v", got)
	}
	for _, args := range [][]string{windows, {"--data-binary", finder}} {
		got = propfind("1", "/", args...)
		if len(got) != 3 || got["/big.bin"]["200 getcontentlength"] != length || got["/sub/"]["200 resourcetype"] != "<D:collection/>" {
			t.Errorf("depth 1 of / %v: %v", args[1], got)
		}
		if _, ok := got["/sub/"]["200 getcontentlength"]; ok {
			t.Errorf("a folder has a length: %v", got["/sub/"])
		}
		for _, depth := range []string{"0", "1"} {
			f := propfind(depth, "/big.bin", args...)
			if len(f) != 1 || f["/big.bin"]["200 getcontentlength"] != length || f["/big.bin"]["200 resourcetype"] != "" {
				t.Errorf("depth %s of a file %v: %v", depth, args[1], f)
			}
			if args[0] != "-H" {
				continue
			}
			if f["/big.bin"]["200 getetag"] != tag || f["/big.bin"]["200 displayname"] != "big.bin" ||
				f["/big.bin"]["200 getcontenttype"] != "application/octet-stream" {
				t.Errorf("allprop of a file: %v", f)
			}
		}
	}
	for _, m := range []string{"LOCK", "UNLOCK"} {
		wantCode(t, curl(t, append([]string{"-X", m, "--data-binary", `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>`}, url+"/big.bin")...), 405, m)
	}
	wantCode(t, curl(t, "-X", "PROPFIND", "-H", "Depth: infinity", url+"/sub/"), 403, "PROPFIND depth infinity")
	wantCode(t, curl(t, "-X", "PROPFIND", "-H", "Depth: 1", "--data-binary", "<D:propfind xmlns:D=\"DAV:\"><D:prop>", url+"/"), 400, "a broken PROPFIND body")
}

// failing is a counting Tree whose Stat of a name ending in ".bad" fails
// as a broken conversion does.
type failing struct{ *counting }

func (f failing) Stat(ctx context.Context, name string) (vfs.Info, error) {
	if strings.HasSuffix(name, ".bad.cold") {
		return vfs.Info{}, fmt.Errorf("%s: broken", name)
	}
	return f.counting.Stat(ctx, name)
}

// TestPropfindLeavesOutBroken: a depth-1 PROPFIND leaves out an entry
// whose size only a Stat could tell when that Stat fails, and lists the
// rest.
func TestPropfindLeavesOutBroken(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"a.bin", "b.bad.cold", "c.cold"} {
		must(t, os.WriteFile(filepath.Join(root, n), []byte(n), 0o644))
	}
	url := door(t, New(failing{&counting{Tree: dirTree(t, root)}}, Config{}))
	r := curl(t, "-X", "PROPFIND", "-H", "Depth: 1", url+"/")
	var m multistatus
	if r.code != 207 || xml.Unmarshal(r.body, &m) != nil {
		t.Fatalf("PROPFIND: %d %s", r.code, r.body)
	}
	got := m.props()
	if len(got) != 3 || got["/a.bin"] == nil || got["/c.cold"]["200 getcontentlength"] != "6" || got["/b.bad.cold"] != nil {
		t.Errorf("PROPFIND: %v", got)
	}
}
