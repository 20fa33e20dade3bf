package server

// InstallsQueued reports how many installs compile and how many wait for a
// turn, for the tests of the install queue in package server_test.
func (s *Server) InstallsQueued() (running, waiting int) {
	q := s.installs
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running, q.waiting.Len()
}
