package storage

// Defaults of Limits, the ones schema/gadget.capnp documents.
const (
	DefaultMaxKeyBytes   = 512
	DefaultMaxValueBytes = 1 << 20
	DefaultMaxTotalBytes = 64 << 20
	DefaultMaxCallWrites = 100_000
	DefaultMaxCallBytes  = 64 << 20
	DefaultMaxListBytes  = 4 << 20
)

// ListLimit is the most entries one list answers with, whatever its caller
// asks for.
const ListLimit = 1000

// WriteOverhead is what one buffered write counts against
// Limits.MaxCallBytes beyond its key and value: the map entry, the order
// slot and the Write itself.
const WriteOverhead = 64

// Limits bound a gadget's storage. A zero field takes its default.
type Limits struct {
	MaxKeyBytes   int   // the longest key
	MaxValueBytes int   // the largest value
	MaxTotalBytes int64 // the EntrySize of all the gadget's data together
	MaxCallWrites int   // keys one call may change: puts and deletes, of keys that exist or not
	MaxCallBytes  int64 // bytes one call's buffered writes may hold: key, value and WriteOverhead each
	MaxListBytes  int64 // bytes of keys and values one list reads from the Store and answers with
}

// DefaultLimits returns the default of every limit.
func DefaultLimits() Limits { return Limits{}.withDefaults() }

func (l Limits) withDefaults() Limits {
	l.MaxKeyBytes = positiveOr(l.MaxKeyBytes, DefaultMaxKeyBytes)
	l.MaxValueBytes = positiveOr(l.MaxValueBytes, DefaultMaxValueBytes)
	l.MaxTotalBytes = positiveOr(l.MaxTotalBytes, DefaultMaxTotalBytes)
	l.MaxCallWrites = positiveOr(l.MaxCallWrites, DefaultMaxCallWrites)
	l.MaxCallBytes = positiveOr(l.MaxCallBytes, DefaultMaxCallBytes)
	l.MaxListBytes = positiveOr(l.MaxListBytes, DefaultMaxListBytes)
	return l
}

func positiveOr[T int | int64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
