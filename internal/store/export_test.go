package store

import "sync"

// HoldCommitterForTest takes the store's committer slot, as a long Commit
// would, until the returned function is called (once is enough; more calls
// do nothing).
func HoldCommitterForTest(s *BoltStore) (release func()) {
	s.committer <- struct{}{}
	var once sync.Once
	return func() { once.Do(func() { <-s.committer }) }
}
