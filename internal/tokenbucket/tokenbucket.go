// Package tokenbucket rate limits events with a token bucket: up to Burst
// events at once, then Rate per second on average. It is the one rate
// limiter of gadgetd's logs (a gadget's Host.log, the lines the RPC server
// writes about peers that have not logged in).
package tokenbucket

import "time"

// Bucket holds up to Burst tokens and gains Rate per second; each allowed
// event takes one. The zero value allows nothing; New returns a full one.
// A Bucket is not safe for concurrent use: its owner's lock guards it.
type Bucket struct {
	rate   float64 // tokens per second
	burst  float64
	tokens float64
	filled time.Time // when tokens was last topped up
}

// New returns a full bucket of burst tokens that refills at rate per second.
func New(rate float64, burst int) Bucket {
	return Bucket{rate: rate, burst: float64(burst), tokens: float64(burst), filled: time.Now()}
}

// Take takes a token at time now if there is one, and reports whether it
// did.
func (b *Bucket) Take(now time.Time) bool {
	b.tokens = min(b.burst, b.tokens+now.Sub(b.filled).Seconds()*b.rate)
	b.filled = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// Full reports whether the bucket is full at time now: forgetting it then
// loses nothing, since a new one starts full.
func (b *Bucket) Full(now time.Time) bool {
	return b.tokens+now.Sub(b.filled).Seconds()*b.rate >= b.burst
}

// Rate is the refill rate, in tokens per second.
func (b *Bucket) Rate() float64 { return b.rate }

// Burst is the bucket's capacity.
func (b *Bucket) Burst() int { return int(b.burst) }
