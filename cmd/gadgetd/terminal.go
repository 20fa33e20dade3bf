package main

import (
	"io"
	"unicode/utf8"
)

// terminalSafe returns a writer that writes what w would get with every
// control character but newline and tab replaced by U+FFFD. Client
// commands print text other users chose (a gadget's name, a link's label, a
// guest's log line); written as it is, an escape sequence in it could
// rewrite the user's terminal or fake rows of a table (an outside tester's
// did).
func terminalSafe(w io.Writer) io.Writer { return safeWriter{w} }

type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	clean := true
	for i := 0; i < len(p) && clean; {
		r, size := utf8.DecodeRune(p[i:])
		clean = !isControl(r)
		i += size
	}
	if clean {
		return s.w.Write(p)
	}
	out := make([]byte, 0, len(p)+8)
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if isControl(r) {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// isControl reports whether r is a C0 or C1 control character, or DEL,
// other than newline and tab.
func isControl(r rune) bool {
	return r != '\n' && r != '\t' && (r < 0x20 || r >= 0x7f && r < 0xa0)
}
