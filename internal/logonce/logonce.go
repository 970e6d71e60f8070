// Package logonce logs each failure once: the first time its key is seen.
package logonce

import (
	"log"
	"sync"
)

// Log logs to a logger, each key once.
type Log struct {
	lg   *log.Logger
	seen sync.Map
}

// New logs to lg.
func New(lg *log.Logger) *Log { return &Log{lg: lg} }

// Printf logs format and args the first time key is seen.
func (l *Log) Printf(key any, format string, args ...any) {
	if _, seen := l.seen.LoadOrStore(key, true); !seen {
		l.lg.Printf(format, args...)
	}
}
