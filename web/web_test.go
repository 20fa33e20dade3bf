package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/web"
)

func get(t *testing.T, h http.Handler, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

func TestHealthzAnswersOK(t *testing.T) {
	resp := get(t, web.Handler(), "GET", "/healthz")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Fatalf("GET /healthz = %d %q, want 200 \"ok\\n\"", resp.StatusCode, body)
	}
}

// The shell page runs only its own scripts and those with the nonce of
// that one response (the gadget frames', which inherit the policy), talks
// only to its own origin, and frames nothing but srcdoc documents.
func TestTheShellPageRunsOnlyItsOwnScriptsAndThoseWithItsNonce(t *testing.T) {
	nonces := map[string]bool{}
	for range 2 {
		resp := get(t, web.Handler(), "GET", "/")
		body, _ := io.ReadAll(resp.Body)
		csp := resp.Header.Get("Content-Security-Policy")
		m := regexp.MustCompile(`<meta name="gadgetd-nonce" content="([^"]+)">`).FindSubmatch(body)
		if resp.StatusCode != http.StatusOK || m == nil {
			t.Fatalf("GET / = %d with no nonce meta element:\n%s", resp.StatusCode, body)
		}
		nonce := string(m[1])
		for _, want := range []string{
			"default-src 'none'",
			"script-src 'self' 'nonce-" + nonce + "';",
			"connect-src 'self'",
			"frame-src 'none'",
			"form-action 'none'",
			"base-uri 'none'",
			"frame-ancestors 'none'",
		} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET / Content-Security-Policy %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-eval") || strings.Contains(strings.Split(strings.Split(csp, "script-src")[1], ";")[0], "unsafe-inline") {
			t.Errorf("GET / Content-Security-Policy %q lets injected script run", csp)
		}
		if resp.Header.Get("Cache-Control") != "no-store" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET / headers %v: want Cache-Control no-store and Referrer-Policy no-referrer", resp.Header)
		}
		nonces[nonce] = true
	}
	if len(nonces) != 2 {
		t.Errorf("two responses had the same nonce %v; a nonce is good for one response", nonces)
	}
}

func TestTheShellsFilesAreServedWithTheirTypes(t *testing.T) {
	for path, want := range map[string]string{
		"/shell/shell.js":   "text/javascript",
		"/shell/sandbox.js": "text/javascript",
		"/shell/shell.css":  "text/css",
	} {
		resp := get(t, web.Handler(), "GET", path)
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, want) {
			t.Errorf("GET %s = %d %q, want 200 %s", path, resp.StatusCode, ct, want)
		}
	}
}

func TestOnlyKnownPathsAndGETAreServed(t *testing.T) {
	for _, c := range []struct{ method, path string }{{"GET", "/nothing"}, {"GET", "/shell/nothing.js"}, {"GET", "/shell/"}, {"GET", "/static/"}, {"POST", "/"}, {"DELETE", "/healthz"}} {
		if resp := get(t, web.Handler(), c.method, c.path); resp.StatusCode < 400 {
			t.Errorf("%s %s = %d, want an error", c.method, c.path, resp.StatusCode)
		}
	}
}
