package archive

import "sync/atomic"

// Budget is the memory archives may hold beyond their files, in bytes:
// the listings a view keeps and what readers of deflated entries keep
// (checkpoints and inflated spans). One budget is shared by everything a
// mount reads; it is given explicitly (Limits.Budget, internal/source's
// SetBudget). A nil *Budget refuses nothing and counts nothing. Safe for
// concurrent use.
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget is a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Limit is the budget's size in bytes (0 for nil).
func (b *Budget) Limit() int64 {
	if b == nil {
		return 0
	}
	return b.limit
}

// Used is the bytes charged now.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Take charges n bytes when they fit, and reports whether they did.
func (b *Budget) Take(n int64) bool {
	if b == nil {
		return true
	}
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// Force charges n bytes whether they fit or not: for what must be held
// anyway (the listing being used), whose owner then gives back others.
func (b *Budget) Force(n int64) {
	if b != nil {
		b.used.Add(n)
	}
}

// Release gives back n bytes charged before.
func (b *Budget) Release(n int64) {
	if b != nil {
		b.used.Add(-n)
	}
}

// charges is what one holder (an entry's reader) has charged to a budget,
// so that all of it goes back when the holder closes or is collected.
type charges struct {
	b *Budget
	n atomic.Int64
}

func (c *charges) take(n int64) bool {
	if !c.b.Take(n) {
		return false
	}
	c.n.Add(n)
	return true
}

func (c *charges) force(n int64) {
	c.b.Force(n)
	c.n.Add(n)
}

func (c *charges) release(n int64) {
	c.b.Release(n)
	c.n.Add(-n)
}

// releaseAll gives back everything still charged.
func (c *charges) releaseAll() { c.b.Release(c.n.Swap(0)) }
