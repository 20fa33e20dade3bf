package fetch

import (
	"errors"
	"strings"
	"testing"
)

func TestAllowsAdmitsOnlyURLsUnderAPrefix(t *testing.T) {
	c, err := New([]Prefix{
		{URL: "https://api.example.com/v1/"},
		{URL: "http://plain.example.com:8080/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, url string
		allowed   bool
	}{
		{"under the prefix", "https://api.example.com/v1/repos", true},
		{"the prefix itself", "https://api.example.com/v1/", true},
		{"the prefix without its slash", "https://api.example.com/v1", true},
		{"explicit default port", "https://api.example.com:443/v1/x", true},
		{"host in another case", "https://API.Example.COM/v1/x", true},
		{"scheme in another case", "HTTPS://api.example.com/v1/x", true},
		{"a query", "https://api.example.com/v1/x?q=../../admin", true},
		{"userinfo, to be stripped", "https://user:pass@api.example.com/v1/x", true},
		{"a fragment, to be dropped", "https://api.example.com/v1/x#frag", true},
		{"dot segments that stay under", "https://api.example.com/v1/a/../b/./c", true},
		{"another port's prefix matched exactly", "http://plain.example.com:8080/anything", true},
		{"an escaped ordinary character", "https://api.example.com/%76%31/x", true},

		{"another path", "https://api.example.com/admin", false},
		{"a longer segment", "https://api.example.com/v10", false},
		{"a longer segment with a slash", "https://api.example.com/v10/x", false},
		{"the root", "https://api.example.com/", false},
		{"dot segments that climb out", "https://api.example.com/v1/../admin", false},
		{"dot segments past the root", "https://api.example.com/v1/../../../admin", false},
		{"encoded dots", "https://api.example.com/v1/%2e%2e/admin", false},
		{"encoded dots in capitals", "https://api.example.com/v1/%2E%2E/admin", false},
		{"one encoded dot", "https://api.example.com/v1/.%2e/admin", false},
		{"an encoded slash", "https://api.example.com/v1%2fadmin", false},
		{"an encoded backslash", "https://api.example.com/v1/..%5cadmin", false},
		{"a raw backslash", `https://api.example.com/v1/..\admin`, false},
		{"a dot segment with parameters", "https://api.example.com/v1/..;/admin", false},
		{"another scheme", "http://api.example.com/v1/x", false},
		{"another port", "https://api.example.com:8443/v1/x", false},
		{"the default port of a non-default prefix", "http://plain.example.com/x", false},
		{"another host", "https://api.example.org/v1/x", false},
		{"a subdomain", "https://evil.api.example.com/v1/x", false},
		{"a host with a trailing dot", "https://api.example.com./v1/x", false},
		{"a host suffix", "https://api.example.com.evil.org/v1/x", false},
		{"ftp", "ftp://api.example.com/v1/x", false},
		{"file", "file:///etc/passwd", false},
		{"opaque", "https:api.example.com/v1/x", false},
		{"relative", "/v1/x", false},
		{"no host", "https:///v1/x", false},
		{"port zero", "https://api.example.com:0/v1/x", false},
		{"a port out of range", "https://api.example.com:65979/v1/x", false},
		{"unparseable", "https://api.example.com:port/v1/", false},
		{"too long", "https://api.example.com/v1/" + strings.Repeat("a", maxURLBytes), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Allows(tc.url)
			if tc.allowed && err != nil {
				t.Fatalf("Allows(%q) = %v, want nil", tc.url, err)
			}
			if !tc.allowed && !errors.Is(err, ErrOutsidePrefixes) {
				t.Fatalf("Allows(%q) = %v, want ErrOutsidePrefixes", tc.url, err)
			}
		})
	}
}

func TestAdmittedURLIsSentInTheFormThatWasChecked(t *testing.T) {
	c, err := New([]Prefix{{URL: "https://api.example.com/v1/"}})
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]string{
		"https://user:pass@API.example.com:443/v1/a/../b/./c?q=1#frag": "https://api.example.com/v1/b/c?q=1",
		"https://api.example.com/v1/a/..":                              "https://api.example.com/v1/",
		"https://api.example.com/v1/a%20b/%3F":                         "https://api.example.com/v1/a%20b/%3F",
	} {
		tg, err := c.admit(raw)
		if err != nil {
			t.Fatalf("admit(%q): %v", raw, err)
		}
		if got := tg.url.String(); got != want {
			t.Errorf("admit(%q) sends %q, want %q", raw, got, want)
		}
	}
}

func TestAnAllowPrivatePrefixAdmitsTheURLsUnderIt(t *testing.T) {
	c, err := New([]Prefix{
		{URL: "http://intranet.test/"},
		{URL: "http://intranet.test/admin/", AllowPrivate: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	for raw, wantPrivate := range map[string]bool{
		"http://intranet.test/admin/x": true,
		"http://intranet.test/other":   false,
	} {
		tg, err := c.admit(raw)
		if err != nil {
			t.Fatal(err)
		}
		if tg.prefix.allowPrivate != wantPrivate {
			t.Errorf("%s admitted by a prefix with AllowPrivate %v, want %v", raw, tg.prefix.allowPrivate, wantPrivate)
		}
	}
}

func TestNewRefusesPrefixesThatAreNotCleanURLPrefixes(t *testing.T) {
	for _, p := range []string{
		"", "api.example.com/v1/", "ftp://api.example.com/", "ftp://api.example.com:21/", "ws://api.example.com:80/", "https://user:pw@api.example.com/",
		"https://api.example.com/v1/?q=1", "https://api.example.com/v1/#f", "https://api.example.com/v1/../",
		"https://api.example.com/%2e/", "https://api.example.com:0/",
	} {
		if _, err := New([]Prefix{{URL: p}}); err == nil {
			t.Errorf("New accepted prefix %q", p)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("New accepted no prefixes")
	}
}

func TestRefusalsQuoteAtMost200BytesOfTheURL(t *testing.T) {
	c, err := New([]Prefix{{URL: "https://api.example.com/v1/"}})
	if err != nil {
		t.Fatal(err)
	}
	long := "https://evil.example.com/" + strings.Repeat("A", 4000)
	err = c.Allows(long)
	if err == nil {
		t.Fatal("allowed")
	}
	msg := err.Error()
	if n := strings.Count(msg, "A"); n > 200 {
		t.Errorf("message holds %d bytes of the URL's path: %s", n, msg)
	}
	if !strings.Contains(msg, "evil.example.com") {
		t.Errorf("message does not name the refused URL: %s", msg)
	}
}
