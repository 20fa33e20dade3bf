package store

// The bounds of one commit group.
const (
	MaxGroupCommitsForTest = maxGroupCommits
	MaxGroupBytesForTest   = maxGroupBytes
)

// QueuedCommitsForTest returns how many commits wait for the next group.
func QueuedCommitsForTest(s *BoltStore) int {
	s.commits.mu.Lock()
	defer s.commits.mu.Unlock()
	return len(s.commits.queue)
}

// LeadingForTest reports whether a commit leads: it runs a group, or waits
// for bbolt's writer lock to.
func LeadingForTest(s *BoltStore) bool {
	s.commits.mu.Lock()
	defer s.commits.mu.Unlock()
	return s.commits.leading
}
