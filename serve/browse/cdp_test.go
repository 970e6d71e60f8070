package browse

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// devtools drives a headless Chromium over the DevTools protocol on a
// pipe (--remote-debugging-pipe: it reads commands from its fd 3 and writes
// replies to its fd 4, each a JSON message ended by a NUL), in one page.
type devtools struct {
	t *testing.T // the test its failures are of
	c *conn
}

// conn is the browser's pipe, shared by the devtools of the tests using it.
type conn struct {
	w       *os.File
	mu      sync.Mutex
	next    int
	waiting map[int]chan reply
	session string
	done    chan struct{}
}

// on is d for the test t (a subtest of d's).
func (d *devtools) on(t *testing.T) *devtools { return &devtools{t: t, c: d.c} }

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// limit bounds every wait on the browser, against a hung one (no test
// measures time).
const limit = 2 * time.Minute

func startDevtools(t *testing.T, bin string, width, height int) *devtools {
	t.Helper()
	toChrome, ours, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	theirs, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
		"--enable-unsafe-swiftshader", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--disable-default-apps", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	d := &devtools{t: t, c: &conn{w: ours, waiting: map[int]chan reply{}, done: make(chan struct{})}}
	go d.c.read(theirs)
	t.Cleanup(func() {
		d.c.w.Close()
		cmd.Process.Kill()
		cmd.Wait()
		theirs.Close()
		if t.Failed() {
			t.Logf("chromium's stderr:\n%s", stderr.String())
		}
	})
	var target struct{ TargetID string }
	d.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct{ SessionID string }
	d.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	d.c.session = att.SessionID
	d.do("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	return d
}

func (d *conn) read(f *os.File) {
	defer close(d.done)
	r := bufio.NewReader(f)
	for {
		msg, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID int `json:"id"`
			reply
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == 0 {
			continue // an event
		}
		d.mu.Lock()
		ch := d.waiting[m.ID]
		delete(d.waiting, m.ID)
		d.mu.Unlock()
		if ch != nil {
			ch <- m.reply
		}
	}
}

// call sends method to the session (the browser for "") and decodes its
// result into out.
func (d *devtools) call(session, method string, params any, out any) {
	d.t.Helper()
	c := d.c
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan reply, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	if _, err := c.w.Write(append(b, 0)); err != nil {
		d.t.Fatalf("%s: %v", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			d.t.Fatalf("%s: %s", method, r.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(r.Result, out); err != nil {
				d.t.Fatalf("%s: %v", method, err)
			}
		}
	case <-c.done:
		d.t.Fatalf("%s: chromium went away", method)
	case <-time.After(limit):
		d.t.Fatalf("%s: no answer from chromium", method)
	}
}

func (d *devtools) do(method string, params any, out any) {
	d.t.Helper()
	d.call(d.c.session, method, params, out)
}

// eval evaluates expr in the page (awaiting a promise) into out.
func (d *devtools) eval(expr string, out any) {
	d.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	d.do("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if r.ExceptionDetails != nil {
		d.t.Fatalf("%s: %s", expr, r.ExceptionDetails.Text)
	}
	if out != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			d.t.Fatalf("%s: %v (%s)", expr, err, r.Result.Value)
		}
	}
}

// until evaluates expr until it is true.
func (d *devtools) until(expr string) {
	d.t.Helper()
	end := time.Now().Add(limit)
	for {
		var ok bool
		d.eval(expr, &ok)
		if ok {
			return
		}
		if time.Now().After(end) {
			d.t.Fatalf("never true: %s", expr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// frame waits until the page has drawn two more frames.
func (d *devtools) frame() {
	d.t.Helper()
	d.eval(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, nil)
}

// shot is a screenshot of the rectangle r of the page.
func (d *devtools) shot(r image.Rectangle) *image.NRGBA {
	d.t.Helper()
	var s struct{ Data string }
	d.do("Page.captureScreenshot", map[string]any{"format": "png",
		"clip": map[string]any{"x": r.Min.X, "y": r.Min.Y, "width": r.Dx(), "height": r.Dy(), "scale": 1}}, &s)
	b, err := base64.StdEncoding.DecodeString(s.Data)
	if err != nil {
		d.t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		d.t.Fatal(err)
	}
	n := image.NewNRGBA(img.Bounds())
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			n.Set(x, y, img.At(x, y))
		}
	}
	return n
}

// viewerDone is true once a mesh folder's page has drawn its view, or
// failed to, and shown its text files.
const viewerDone = `['drawn', 'error'].includes((document.getElementById('view') || {dataset: {}}).dataset.state) &&
	[...document.querySelectorAll('pre.fetch')].every(p => p.dataset.state)`

// thumbsDone is true once every thumbnail in view of a folder page has
// loaded or given way to its icon (those below are lazy: never fetched).
const thumbsDone = `document.readyState === 'complete' && [...document.querySelectorAll('img.thumb')].every(
	i => i.getBoundingClientRect().top > innerHeight ||
		i.parentNode.classList.contains('loaded') || i.parentNode.classList.contains('missing'))`

// load navigates to url and waits until ready is true.
func (d *devtools) load(url, ready string) {
	d.t.Helper()
	d.do("Page.navigate", map[string]any{"url": url}, nil)
	d.until(`location.href === ` + strconv.Quote(url) + ` && (` + ready + `)`)
	d.frame()
}

// page is a screenshot of the viewport, kept as name in the test's
// artifacts.
func (d *devtools) page(name string) *image.NRGBA {
	d.t.Helper()
	var m struct{ W, H int }
	d.eval(`({w: innerWidth, h: innerHeight})`, &m)
	img := d.shot(image.Rect(0, 0, m.W, m.H))
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		d.t.Fatal(err)
	}
	p := filepath.Join(d.t.ArtifactDir(), name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		d.t.Fatal(err)
	}
	d.t.Logf("screenshot %s", p)
	return img
}

func (d *devtools) key(key, code string, vk int) {
	d.t.Helper()
	for _, typ := range []string{"keyDown", "keyUp"} {
		p := map[string]any{"type": typ, "key": key, "code": code, "windowsVirtualKeyCode": vk}
		if typ == "keyDown" && len(key) == 1 {
			p["text"] = key
		}
		d.do("Input.dispatchKeyEvent", p, nil)
	}
	d.frame()
}

func (d *devtools) mouse(typ string, x, y int, extra map[string]any) {
	d.t.Helper()
	p := map[string]any{"type": typ, "x": x, "y": y}
	for k, v := range extra {
		p[k] = v
	}
	d.do("Input.dispatchMouseEvent", p, nil)
}

// differ counts the pixels of a's bounds where a and b differ.
func differ(a, b *image.NRGBA) int {
	n := 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.NRGBAAt(x, y) != b.NRGBAAt(x, y) {
				n++
			}
		}
	}
	return n
}

// covered counts the pixels of img not of the stage's colour.
func covered(img *image.NRGBA) int {
	n := 0
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if img.NRGBAAt(x, y) != stageColour {
				n++
			}
		}
	}
	return n
}

// checkControls drives the viewer at url with the keyboard, the mouse and
// the wheel, and checks each moves the camera as it says.
func checkControls(t *testing.T, d *devtools, url string) {
	d.load(url, viewerDone)
	var b struct{ X, Y, W, H float64 }
	d.eval(`(() => { const r = document.getElementById('view').getBoundingClientRect();
		return {x: r.x, y: r.y, w: r.width, h: r.height}; })()`, &b)
	// The canvas less a margin clear of the status line at its foot.
	r := image.Rect(int(b.X)+4, int(b.Y)+4, int(b.X+b.W)-4, int(b.Y+b.H)-40)
	cx, cy := (r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2
	d.frame()
	home := d.shot(r)
	t.Logf("the model covers %d of the %d pixels of %v", covered(home), r.Dx()*r.Dy(), r)
	if covered(home) < r.Dx()*r.Dy()/20 {
		t.Fatalf("the model covers %d pixels of %v", covered(home), r)
	}
	same := func(what string, img *image.NRGBA) {
		t.Helper()
		if n := differ(home, img); n > 0 {
			t.Errorf("%s: %d pixels differ from the first view", what, n)
		}
	}
	moved := func(what string, img *image.NRGBA) {
		t.Helper()
		if n := differ(home, img); n < r.Dx()*r.Dy()/100 {
			t.Errorf("%s: only %d pixels changed", what, n)
		}
		if covered(img) < r.Dx()*r.Dy()/40 {
			t.Errorf("%s: the model left the view (%d pixels)", what, covered(img))
		}
	}
	d.eval(`document.getElementById('view').focus(), true`, nil)
	d.key("ArrowLeft", "ArrowLeft", 37)
	left := d.shot(r)
	moved("ArrowLeft", left)
	d.key("ArrowRight", "ArrowRight", 39)
	same("ArrowLeft then ArrowRight", d.shot(r))
	d.key("ArrowUp", "ArrowUp", 38)
	moved("ArrowUp", d.shot(r))
	d.key("r", "KeyR", 82)
	same("R", d.shot(r))

	d.key("+", "Equal", 187)
	if in := d.shot(r); covered(in) <= covered(home) {
		t.Errorf("+ did not zoom in: %d pixels covered, %d before", covered(in), covered(home))
	}
	d.key("-", "Minus", 189)
	same("+ then -", d.shot(r))

	// A drag orbits too: the model turns with the pointer, the way
	// ArrowRight turns it, not ArrowLeft's way.
	d.mouse("mouseMoved", cx, cy, nil)
	d.mouse("mousePressed", cx, cy, map[string]any{"button": "left", "buttons": 1, "clickCount": 1})
	for i := 1; i <= 6; i++ {
		d.mouse("mouseMoved", cx+20*i, cy, map[string]any{"button": "left", "buttons": 1})
	}
	d.mouse("mouseReleased", cx+120, cy, map[string]any{"button": "left", "buttons": 0, "clickCount": 1})
	d.frame()
	dragged := d.shot(r)
	moved("a drag", dragged)
	if differ(dragged, left) == 0 {
		t.Error("a drag right turned the view as ArrowLeft does")
	}
	d.key("Home", "Home", 36)
	same("Home", d.shot(r))

	d.mouse("mouseWheel", cx, cy, map[string]any{"deltaX": 0, "deltaY": -400})
	d.frame()
	if in := d.shot(r); covered(in) <= covered(home) {
		t.Errorf("the wheel did not zoom in: %d pixels covered, %d before", covered(in), covered(home))
	}
	d.eval(`document.getElementById('reset').click(), true`, nil)
	d.frame()
	same("the reset button", d.shot(r))
}
