package rpcguard

// Receiving reports the bytes of messages still arriving on all of s's
// connections, for the tests of package rpcguard_test.
func (s *Server) Receiving() int64 { return s.recv.used.Load() }
