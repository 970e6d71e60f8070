package decode

import (
	"errors"
	"fmt"
)

// FormatError is a decode failure at a known place in a file, in the manner
// of debug/elf's FormatError: users debug modded files with a hex editor, so
// the message names the file, the chunk or section, the field and the offset.
type FormatError struct {
	File    string // path of the source file
	Section string // chunk or section ("VERT", "surface 2 geometry"), may be empty
	Field   string // field being read ("vertex_count")
	Offset  int64  // byte offset in the file (or in the decompressed block, see Section)
	Msg     string // what is wrong
	Err     error  // wrapped cause (ErrTruncated, ErrLimit, ...), may be nil
}

func (e *FormatError) Unwrap() error { return e.Err }

func (e *FormatError) Error() string {
	s := e.File + ": "
	if e.Section != "" {
		s += e.Section + ": "
	}
	s += fmt.Sprintf("offset 0x%x", e.Offset)
	if e.Field != "" {
		s += ": field " + e.Field
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Errorf builds a FormatError.
func Errorf(file, section, field string, off int64, format string, args ...any) *FormatError {
	return &FormatError{File: file, Section: section, Field: field, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// ErrTruncated is wrapped by errors about data that ends too early.
var ErrTruncated = errors.New("unexpected end of data")

// ErrLimit is wrapped by errors about files that exceed a configured limit.
var ErrLimit = errors.New("limit exceeded")
