package fetch

import "testing"

func TestCanonicalPrefixIsTheFormThatAdmitsTheSameURLs(t *testing.T) {
	for raw, want := range map[string]string{
		"HTTPS://Api.Example.com:443/v1":  "https://api.example.com/v1/",
		"https://api.example.com/v1/":     "https://api.example.com/v1/",
		"http://api.example.com":          "http://api.example.com/",
		"http://127.0.0.1:8080/a%20b/":    "http://127.0.0.1:8080/a%20b/",
		"http://[::1]:80/x":               "http://[::1]/x/",
		"https://user:pw@example.com/x/":  "",
		"https://example.com/a/../b/":     "",
		"https://example.com/x/?q=1":      "",
		"ftp://example.com/":              "",
		"https://example.com/%2e%2e/etc/": "",
	} {
		got, err := CanonicalPrefix(raw)
		if want == "" {
			if err == nil {
				t.Errorf("CanonicalPrefix(%q) = %q, want an error", raw, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("CanonicalPrefix(%q) = %q, %v; want %q", raw, got, err, want)
			continue
		}
		// The canonical form is itself canonical, and admits what raw admits.
		if again, err := CanonicalPrefix(got); err != nil || again != got {
			t.Errorf("CanonicalPrefix(%q) = %q, %v; not a fixed point", got, again, err)
		}
		c, err := New([]Prefix{{URL: got}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Allows(raw); err != nil {
			t.Errorf("%q does not admit %q: %v", got, raw, err)
		}
	}
}
