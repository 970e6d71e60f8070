package unigine

import "runtime"

type runtimeMem struct{ before uint64 }

func (m *runtimeMem) start() {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.before = s.TotalAlloc
}

func (m *runtimeMem) stop() uint64 {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.TotalAlloc - m.before
}
