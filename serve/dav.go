package serve

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"

	"github.com/meshfs/meshfs/vfs"
)

// PROPFIND is answered here, whole: a depth-0 one from the name's Stat, a
// depth-1 one of a folder from its Stat and its one ReadDir, plus a Stat
// (which converts, as stat in the mount does) of each entry whose size
// only a conversion can tell: clients take getcontentlength for the
// file's size, so it must be exact. Nothing is opened or read: the content
// type comes from the name, the ETag from Info.Version (the GET's). What
// the tree answers is all asked before the 207 is written, so that an
// error can still be a status of its own; the slot is then given back and
// the multistatus written.
//
// The properties are RFC 4918's live ones: resourcetype, displayname,
// getlastmodified and supportedlock of every entry, and getcontentlength,
// getcontenttype and getetag of a file. supportedlock is empty (no lock is
// taken, DESIGN.md, Serve); any other name asked for is in a 404 propstat.

// maxPropfindBody bounds the request body read (a client's list of the
// properties it wants).
const maxPropfindBody = 1 << 20

// propfindReq is what a PROPFIND body asks for: allprop (with the names
// of include), propname, or the names of prop.
type propfindReq struct {
	// propname asks for the names alone.
	propname bool
	// props are the properties asked of every entry, each once, in
	// order: for allprop and propname every live one, then include's.
	props []asked
}

// asked is a property asked for; named, by its name (prop, include):
// an entry without it says so in a 404 propstat.
type asked struct {
	name  xml.Name
	named bool
}

// ask adds the property p once.
func (req *propfindReq) ask(p xml.Name, named bool) {
	for _, a := range req.props {
		if a.name == p {
			return
		}
	}
	req.props = append(req.props, asked{p, named})
}

// allLive is the request of allprop, with the names of include.
func allLive(propname bool, include []xml.Name) propfindReq {
	req := propfindReq{propname: propname}
	for _, p := range liveProps {
		req.ask(p, false)
	}
	for _, p := range include {
		req.ask(p, true)
	}
	return req
}

// readPropfind parses a PROPFIND body; an empty one asks for allprop
// (RFC 4918, 9.1).
func readPropfind(r io.Reader) (propfindReq, error) {
	var body struct {
		XMLName  xml.Name  `xml:"DAV: propfind"`
		Allprop  *struct{} `xml:"DAV: allprop"`
		Propname *struct{} `xml:"DAV: propname"`
		Prop     *propList `xml:"DAV: prop"`
		Include  *propList `xml:"DAV: include"`
	}
	lr := &io.LimitedReader{R: r, N: maxPropfindBody + 1}
	err := xml.NewDecoder(lr).Decode(&body)
	switch {
	case err == io.EOF && lr.N == maxPropfindBody+1:
		return allLive(false, nil), nil // no body
	case lr.N <= 0:
		return propfindReq{}, errors.New("the PROPFIND body is too long")
	case err != nil:
		return propfindReq{}, fmt.Errorf("the PROPFIND body: %w", err)
	}
	n := 0
	for _, set := range []bool{body.Allprop != nil, body.Propname != nil, body.Prop != nil} {
		if set {
			n++
		}
	}
	if n != 1 || body.Include != nil && body.Allprop == nil {
		return propfindReq{}, errors.New("the PROPFIND body must ask for one of allprop, propname or prop")
	}
	if body.Prop == nil {
		var include []xml.Name
		if body.Include != nil {
			include = *body.Include
		}
		return allLive(body.Propname != nil, include), nil
	}
	var req propfindReq
	for _, p := range *body.Prop {
		req.ask(p, true)
	}
	return req, nil
}

// propList is the names of the elements inside a prop or include.
type propList []xml.Name

func (l *propList) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	for {
		t, err := d.Token()
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.StartElement:
			*l = append(*l, t.Name)
			if err := d.Skip(); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

// propfind answers a PROPFIND of name.
func (h *Handler) propfind(w http.ResponseWriter, r *http.Request, tree vfs.Tree, name string) {
	depth := r.Header.Get("Depth")
	switch depth {
	case "0", "1":
	default: // "infinity", or none, which means infinity (RFC 4918, 9.1)
		w.Header().Set("Content-Type", `application/xml; charset="utf-8"`)
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?>`+"\n"+
			`<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>`+"\n")
		return
	}
	req, err := readPropfind(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !h.acquire(w) {
		return
	}
	entries, err := h.described(r, tree, name, depth == "1")
	h.release()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	bw := bufio.NewWriterSize(w, 32<<10)
	bw.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<D:multistatus xmlns:D="DAV:">`)
	var buf []byte
	for i, e := range entries {
		child := name
		if i > 0 {
			child = join(name, e.Name)
		}
		buf = appendResponse(buf[:0], child, e, req)
		if _, err := bw.Write(buf); err != nil {
			return // the client went away
		}
	}
	bw.WriteString("</D:multistatus>\n")
	bw.Flush()
}

// described is the Info of name and, for a folder with depth 1, of each
// entry shown: the listing's, or a Stat's when the listing could not tell
// the size. An entry that fails to Stat (broken, gone) is left out.
func (h *Handler) described(r *http.Request, tree vfs.Tree, name string, depth1 bool) ([]vfs.Info, error) {
	ctx := r.Context()
	info, err := tree.Stat(ctx, name)
	if err != nil {
		return nil, err
	}
	if !shown(info.Mode) {
		return nil, fmt.Errorf("%s: not a folder or a regular file: %w", name, fs.ErrNotExist)
	}
	out := []vfs.Info{info}
	if !info.IsDir() || !depth1 {
		return out, nil
	}
	list, err := tree.ReadDir(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, e := range list {
		if !shown(e.Mode) {
			continue
		}
		if e.Size < 0 {
			child := join(name, e.Name)
			if e, err = tree.Stat(ctx, child); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				h.log.Printf("meshfs serve: PROPFIND /%s: %v (left out)", child, err)
				continue
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// join is the tree name of the entry elem of the folder dir.
func join(dir, elem string) string {
	if dir == "" {
		return elem
	}
	return dir + "/" + elem
}

// Properties of an entry, in the order written.
var (
	pResourceType  = xml.Name{Space: "DAV:", Local: "resourcetype"}
	pDisplayName   = xml.Name{Space: "DAV:", Local: "displayname"}
	pContentLength = xml.Name{Space: "DAV:", Local: "getcontentlength"}
	pLastModified  = xml.Name{Space: "DAV:", Local: "getlastmodified"}
	pContentType   = xml.Name{Space: "DAV:", Local: "getcontenttype"}
	pETag          = xml.Name{Space: "DAV:", Local: "getetag"}
	pSupportedLock = xml.Name{Space: "DAV:", Local: "supportedlock"}

	liveProps = []xml.Name{pResourceType, pDisplayName, pContentLength, pLastModified, pContentType, pETag, pSupportedLock}
)

// has reports whether the entry e has the property p: every live one
// but a folder's length, type and ETag.
func has(e vfs.Info, p xml.Name) bool {
	switch p {
	case pContentLength, pContentType, pETag:
		return !e.IsDir()
	case pResourceType, pDisplayName, pLastModified, pSupportedLock:
		return true
	}
	return false
}

// appendResponse appends the response element of the entry e, tree name
// name, as req asks.
func appendResponse(b []byte, name string, e vfs.Info, req propfindReq) []byte {
	href := "/" + name
	if e.IsDir() && name != "" {
		href += "/"
	}
	b = append(b, "<D:response><D:href>"...)
	b = appendText(b, (&url.URL{Path: href}).EscapedPath())
	b = append(b, "</D:href>"...)
	found, missing := 0, false
	start := len(b)
	b = append(b, "<D:propstat><D:prop>"...)
	for _, a := range req.props {
		switch {
		case !has(e, a.name):
			missing = missing || a.named
			continue
		case req.propname:
			b = appendEmpty(b, a.name)
		default:
			b = appendProp(b, a.name, e)
		}
		found++
	}
	b = append(b, "</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>"...)
	if found == 0 && missing {
		b = b[:start] // a propstat is not empty
	}
	if missing {
		b = append(b, "<D:propstat><D:prop>"...)
		for _, a := range req.props {
			if a.named && !has(e, a.name) {
				b = appendEmpty(b, a.name)
			}
		}
		b = append(b, "</D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>"...)
	}
	return append(b, "</D:response>"...)
}

// appendProp appends the live property p of e with its value.
func appendProp(b []byte, p xml.Name, e vfs.Info) []byte {
	switch p {
	case pResourceType:
		if e.IsDir() {
			return append(b, "<D:resourcetype><D:collection/></D:resourcetype>"...)
		}
		return append(b, "<D:resourcetype/>"...)
	case pDisplayName:
		b = append(b, "<D:displayname>"...)
		b = appendText(b, e.Name)
		return append(b, "</D:displayname>"...)
	case pContentLength:
		b = append(b, "<D:getcontentlength>"...)
		b = strconv.AppendInt(b, e.Size, 10)
		return append(b, "</D:getcontentlength>"...)
	case pLastModified:
		b = append(b, "<D:getlastmodified>"...)
		b = e.ModTime.UTC().AppendFormat(b, http.TimeFormat)
		return append(b, "</D:getlastmodified>"...)
	case pContentType:
		b = append(b, "<D:getcontenttype>"...)
		b = appendText(b, contentType(e.Name))
		return append(b, "</D:getcontenttype>"...)
	case pETag:
		b = append(b, "<D:getetag>"...)
		b = append(b, etag(e)...)
		return append(b, "</D:getetag>"...)
	}
	return append(b, "<D:supportedlock/>"...) // pSupportedLock: none
}

// appendEmpty appends the element p, empty.
func appendEmpty(b []byte, p xml.Name) []byte {
	if p.Space == "DAV:" {
		b = append(b, "<D:"...)
		b = append(b, p.Local...)
		return append(b, "/>"...)
	}
	b = append(b, '<')
	b = append(b, p.Local...)
	b = append(b, ` xmlns="`...)
	b = appendText(b, p.Space)
	return append(b, `"/>`...)
}

// appendText appends s escaped as XML character data (or an attribute
// value): what is not plain is escaped by encoding/xml, a byte XML cannot
// hold replaced.
func appendText(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= 0x7f || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'' {
			var buf bytes.Buffer
			xml.EscapeText(&buf, []byte(s))
			return append(b, buf.Bytes()...)
		}
	}
	return append(b, s...)
}
