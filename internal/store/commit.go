package store

// Group commit: the gadget data commits of concurrent calls share one bbolt
// write transaction, and so one fsync, the cost that bounds how many calls a
// second can write.
//
// Leaders and followers. A Commit that arrives while no group is running
// leads: it runs a group of itself at once, with no delay to wait for
// company, so a lone writer costs what a bare bbolt Update does. Commits that
// arrive while a group runs wait in the queue. When its group has committed,
// the leader takes the next group from the queue (its head, and the later
// commits that fit within maxGroupCommits and maxGroupBytes: takeGroup) and
// hands it to that group's first member, which leads it in turn. So exactly
// one goroutine, the leader, runs group transactions at a time; it is always
// the goroutine of a caller that is waiting anyway, and the store owns no
// goroutine of its own: Close needs to stop nothing. A group that runs after
// Close fails with bbolt's ErrDatabaseNotOpen for every member.
//
// Locking and ownership. groupCommitter.mu guards queue and leading. A
// queued commit whose context ends takes itself out of the queue under mu
// and applies nothing. Once a leader has taken it into a group (also under
// mu) it can no longer leave: it waits for its answer, because the leader
// reads its writes until the transaction ends. From then on the leader alone
// touches the pendingCommit (its started field), until it answers on done.
// Other writers of the file (users, tokens, blueprints, the gatekeepers'
// ledger) run their own bbolt Updates; bbolt's writer lock orders them with
// the groups.
//
// Failures. A member is checked before it writes: its context (the first
// time only; see pendingCommit.started) and its quota. One that fails a check
// is left out of the transaction, which goes on without it. A member that
// fails after it began to write (its context ended between two batches of
// writes, or bbolt refused a write) makes the transaction roll back whole;
// the group is run again without it, as bbolt's DB.Batch does. Each run
// leaves out at least one more member, so a group ends within
// len(group)+1 runs. Every failed member gets its own error and has applied
// nothing; every other member is answered with the outcome of the commit,
// only once bbolt has written and fsynced it (or failed to).

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/internal/storage"
)

// The bounds of one group, so that its transaction, and the work of running
// it again after a failure, cannot grow without end. A single commit larger
// than maxGroupBytes still runs, alone.
const (
	maxGroupCommits = 128
	maxGroupBytes   = 4 << 20 // EntrySize of the writes
)

// groupCommitter runs the BoltStore's gadget data commits in groups.
type groupCommitter struct {
	db *bolt.DB

	mu      sync.Mutex
	leading bool             // a leader holds the groups: it runs one or is about to hand the next over
	queue   []*pendingCommit // commits for the next group, in arrival order
}

// pendingCommit is one Commit on its way through a group.
type pendingCommit struct {
	ctx      context.Context
	gadgetID string
	writes   []storage.Write
	maxSize  int64
	bytes    int64 // the EntrySize of writes, counted against maxGroupBytes

	// started is set once the commit's writes have begun in a transaction,
	// perhaps one that was then rolled back because of another member.
	// From then on they no longer look at the context: the Store contract
	// is that a commit that has begun to write is not cancelled, and a run
	// again must give the members that stay what it gave them before.
	started bool

	done chan error            // its answer; buffered
	lead chan []*pendingCommit // the group it is to lead; buffered
}

func newPendingCommit(ctx context.Context, gadgetID string, writes []storage.Write, maxSize int64) *pendingCommit {
	var bytes int64
	for _, w := range writes {
		bytes += storage.EntrySize(w.Key, w.Value)
	}
	return &pendingCommit{
		ctx: ctx, gadgetID: gadgetID, writes: writes, maxSize: maxSize, bytes: bytes,
		done: make(chan error, 1), lead: make(chan []*pendingCommit, 1),
	}
}

func errDidNotStart(err error) error { return fmt.Errorf("storage commit did not start: %w", err) }

// commit runs p in a group and returns its answer.
func (c *groupCommitter) commit(p *pendingCommit) error {
	c.mu.Lock()
	if !c.leading {
		c.leading = true
		c.mu.Unlock()
		c.lead([]*pendingCommit{p})
		return <-p.done
	}
	c.queue = append(c.queue, p)
	c.mu.Unlock()

	ctxDone := p.ctx.Done()
	for {
		select {
		case err := <-p.done:
			return err
		case group := <-p.lead:
			c.lead(group) // answers p, among others
		case <-ctxDone:
			if c.leave(p) {
				return errDidNotStart(p.ctx.Err())
			}
			ctxDone = nil // a leader took it: its answer is coming
		}
	}
}

// leave takes p out of the queue, unless a leader has taken it already.
func (c *groupCommitter) leave(p *pendingCommit) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.queue, p)
	if i < 0 {
		return false
	}
	c.queue = slices.Delete(c.queue, i, i+1)
	return true
}

// lead runs group, then hands the next group to its first member or, if
// nothing is queued, gives up the lead.
func (c *groupCommitter) lead(group []*pendingCommit) {
	c.commitGroup(group)
	c.mu.Lock()
	next := c.takeGroup()
	c.leading = next != nil
	c.mu.Unlock()
	if next != nil {
		next[0].lead <- next
	}
}

// takeGroup takes the next group from the queue, or returns nil if the
// queue is empty. c.mu must be held.
//
// The head always goes, so no commit waits for ever. Later commits join it
// while the group stays within maxGroupCommits and maxGroupBytes, and one
// that would take it past maxGroupBytes is skipped, not waited for: a small
// commit queued behind large ones (another user's 60 MB calls, say) goes in
// the next transaction, not after all of them. A head larger than the bound
// runs with small company, whose bytes are bounded alone. Taking commits out
// of arrival order is safe: queued commits are concurrent, and each gadget's
// calls commit one at a time.
func (c *groupCommitter) takeGroup() []*pendingCommit {
	if len(c.queue) == 0 {
		return nil
	}
	head := c.queue[0]
	group := []*pendingCommit{head}
	bytes := head.bytes
	if bytes > maxGroupBytes {
		bytes = 0
	}
	rest := c.queue[:0]
	for _, p := range c.queue[1:] {
		if len(group) < maxGroupCommits && bytes+p.bytes <= maxGroupBytes {
			group = append(group, p)
			bytes += p.bytes
		} else {
			rest = append(rest, p)
		}
	}
	clear(c.queue[len(rest):]) // the tail would hold on to the writes
	c.queue = rest
	return group
}

// commitGroup commits the members of group together and answers each.
func (c *groupCommitter) commitGroup(group []*pendingCommit) {
	failed := make([]error, len(group)) // each member's own failure
	for {
		spoiled := false // a member failed after writing: the transaction rolls back
		err := c.db.Update(func(tx *bolt.Tx) error {
			for i, p := range group {
				if failed[i] != nil {
					continue
				}
				size, err := p.check(tx)
				if err != nil {
					failed[i] = err // it wrote nothing: the others go on
					continue
				}
				if err := p.write(tx, size); err != nil {
					failed[i], spoiled = err, true
					return err
				}
			}
			return nil
		})
		if spoiled {
			continue
		}
		for i, p := range group {
			if failed[i] != nil {
				p.done <- failed[i]
			} else {
				p.done <- err
			}
		}
		return
	}
}

// check says whether p may write in tx, writing nothing, and returns the
// size the gadget's data will have after p's writes.
func (p *pendingCommit) check(tx *bolt.Tx) (sizeAfter int64, err error) {
	if !p.started {
		if err := p.ctx.Err(); err != nil {
			return 0, errDidNotStart(err)
		}
	}
	kv, before := gadgetKV(tx, p.gadgetID)
	after := sizeAfterWrites(kv, before, p.writes)
	if err := storage.CheckQuota(before, after, p.maxSize); err != nil {
		return 0, err
	}
	return after, nil
}

// write applies p's writes in tx and records the data's new size. The
// first time, it checks the context between batches of writes, and returns
// an error, which rolls tx back, once it has ended.
func (p *pendingCommit) write(tx *bolt.Tx, sizeAfter int64) error {
	first := !p.started
	p.started = true
	g, err := tx.Bucket(bucketData).CreateBucketIfNotExists([]byte(p.gadgetID))
	if err != nil {
		return err
	}
	kv, err := g.CreateBucketIfNotExists(keyKV)
	if err != nil {
		return err
	}
	for i, w := range p.writes {
		if first && i%ctxCheckEvery == ctxCheckEvery-1 {
			if err := p.ctx.Err(); err != nil {
				return fmt.Errorf("storage commit abandoned before writing: %w", err)
			}
		}
		if w.Delete {
			err = kv.Delete([]byte(w.Key))
		} else {
			err = kv.Put([]byte(w.Key), w.Value)
		}
		if err != nil {
			return err
		}
	}
	var raw [8]byte
	binary.BigEndian.PutUint64(raw[:], uint64(sizeAfter))
	return g.Put(keySize, raw[:])
}

// sizeAfterWrites returns the size that data of size bytes, kept in kv (nil
// if none yet), will have once writes are applied in order. It only reads.
func sizeAfterWrites(kv *bolt.Bucket, size int64, writes []storage.Write) int64 {
	// The EntrySize of each key the writes have set so far, -1 once deleted:
	// kv does not show them yet.
	written := make(map[string]int64, len(writes))
	var c *bolt.Cursor
	if kv != nil {
		c = kv.Cursor()
	}
	for _, w := range writes {
		old, ok := written[w.Key]
		if !ok {
			old = -1
			if c != nil {
				if k, v := c.Seek([]byte(w.Key)); k != nil && string(k) == w.Key {
					old = storage.EntrySize(w.Key, v)
				}
			}
		}
		if old >= 0 {
			size -= old
		}
		if w.Delete {
			written[w.Key] = -1
			continue
		}
		n := storage.EntrySize(w.Key, w.Value)
		written[w.Key] = n
		size += n
	}
	return size
}
