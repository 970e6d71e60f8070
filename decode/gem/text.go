package gem

import (
	"fmt"
	"strconv"
	"strings"
)

// Node is one brace group of GEM's text files (.mdl, .mtl, .def): `{name
// arg arg {child …} …}`. Args are the bare words and quoted strings
// between the name and the end, in order; children are the nested groups.
// GEM's text files are read by ParseText, which keeps each node's line for
// error messages.
type Node struct {
	Name     string
	Args     []string
	Children []*Node
	Line     int
}

// maxTextDepth bounds nesting: real skeletons nest a few dozen bones deep.
const maxTextDepth = 256

// TextError is a syntax error in a GEM text file, at a line.
type TextError struct {
	File string
	Line int
	Msg  string
}

func (e *TextError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ParseText reads a GEM text file into its top-level groups. `;` starts a
// comment to the end of the line; strings are in double quotes and hold
// no escapes; anything else up to a space or brace is a bare word. A
// group's name is a word or a string (`{"Stuff" …}` in .mdl extenders).
func ParseText(file string, b []byte) ([]*Node, error) {
	p := &textParser{file: file, b: b, line: 1}
	root := &Node{}
	stack := []*Node{root}
	for {
		tok, kind, err := p.next()
		if err != nil {
			return nil, err
		}
		top := stack[len(stack)-1]
		switch kind {
		case tokEOF:
			if len(stack) > 1 {
				return nil, &TextError{file, top.Line, fmt.Sprintf("group {%s opened here is never closed", top.Name)}
			}
			return root.Children, nil
		case tokOpen:
			if len(stack) > maxTextDepth {
				return nil, &TextError{file, p.line, fmt.Sprintf("groups nest more than %d deep", maxTextDepth)}
			}
			name, nk, err := p.next()
			if err != nil {
				return nil, err
			}
			if nk != tokWord && nk != tokString {
				return nil, &TextError{file, p.line, "a group must start with a name"}
			}
			n := &Node{Name: name, Line: p.line}
			top.Children = append(top.Children, n)
			stack = append(stack, n)
		case tokClose:
			if len(stack) == 1 {
				return nil, &TextError{file, p.line, "} without {"}
			}
			stack = stack[:len(stack)-1]
		case tokWord, tokString:
			if len(stack) == 1 {
				return nil, &TextError{file, p.line, fmt.Sprintf("%q outside any group", tok)}
			}
			top.Args = append(top.Args, tok)
		}
	}
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokOpen
	tokClose
	tokWord
	tokString
)

type textParser struct {
	file string
	b    []byte
	pos  int
	line int
}

func (p *textParser) next() (string, tokKind, error) {
	for p.pos < len(p.b) {
		c := p.b[p.pos]
		switch {
		case c == '\n':
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			p.pos++
		case c == ';':
			for p.pos < len(p.b) && p.b[p.pos] != '\n' {
				p.pos++
			}
		case c == '{':
			p.pos++
			return "", tokOpen, nil
		case c == '}':
			p.pos++
			return "", tokClose, nil
		case c == '"':
			start := p.pos + 1
			end := start
			for end < len(p.b) && p.b[end] != '"' {
				if p.b[end] == '\n' {
					p.line++
				}
				end++
			}
			if end >= len(p.b) {
				return "", 0, &TextError{p.file, p.line, "string never closed"}
			}
			p.pos = end + 1
			return string(p.b[start:end]), tokString, nil
		default:
			start := p.pos
			for p.pos < len(p.b) && !strings.ContainsRune(" \t\r\n\f\v{}\";", rune(p.b[p.pos])) {
				p.pos++
			}
			return string(p.b[start:p.pos]), tokWord, nil
		}
	}
	return "", tokEOF, nil
}

// Child returns n's first child group called name (case-insensitive, as
// the games read them), or nil.
func (n *Node) Child(name string) *Node {
	for _, c := range n.Children {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

// Arg returns n's i-th argument, or "" when it has fewer.
func (n *Node) Arg(i int) string {
	if n == nil || i >= len(n.Args) {
		return ""
	}
	return n.Args[i]
}

// Floats parses all of n's arguments as numbers; want > 0 requires that
// many. A quoted list ("229 229 229 128") is split at spaces.
func (n *Node) Floats(file string, want int) ([]float64, error) {
	var fields []string
	for _, a := range n.Args {
		fields = append(fields, strings.Fields(a)...)
	}
	if want > 0 && len(fields) != want {
		return nil, &TextError{file, n.Line, fmt.Sprintf("{%s} has %d numbers, want %d", n.Name, len(fields), want)}
	}
	out := make([]float64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, &TextError{file, n.Line, fmt.Sprintf("{%s}: %q is not a number", n.Name, f)}
		}
		out[i] = v
	}
	return out, nil
}
