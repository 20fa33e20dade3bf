package server

// PresentSessions counts the sessions the presence registry holds and the
// gadgets it holds them for, for the tests of presence in package
// server_test.
func (s *Server) PresentSessions() (sessions, gadgets int) {
	p := &s.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, open := range p.gadgets {
		sessions += len(open)
	}
	return sessions, len(p.gadgets)
}

// Pseudonym is the user id the guest of gadget gadgetID knows user userID
// by.
func (s *Server) Pseudonym(gadgetID, userID string) string { return s.pseudonym(gadgetID, userID) }
