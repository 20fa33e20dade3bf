package main

import (
	"bytes"
	"testing"
)

// TestTerminalSafeWriterReplacesControlCharacters: an escape sequence, a
// carriage return, a bell or a C1 control in text another user chose
// reaches the terminal as U+FFFD; newlines, tabs and other text pass as
// they are.
func TestTerminalSafeWriterReplacesControlCharacters(t *testing.T) {
	var buf bytes.Buffer
	w := terminalSafe(&buf)
	in := "name\x1b[2J\r\a\u009b31m\tnaïve ✓\n"
	n, err := w.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	if got, want := buf.String(), "name\ufffd[2J\ufffd\ufffd\ufffd31m\tnaïve ✓\n"; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}
