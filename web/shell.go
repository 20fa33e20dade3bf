package web

// The browser shell: web/shell/ embedded in the binary. The page at / is a
// template only for its nonce, fresh on every response, which the shell's
// Content-Security-Policy allows; every other file is served as it is. The
// shell's scripts read the nonce and give it to the scripts of gadget
// frames, because a srcdoc frame inherits the policy of the page that holds
// it (web/shell/sandbox.js explains why that nonce is not what keeps a
// frame offline).

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"html/template"
	"io/fs"
	"log"
	"net/http"
	"strings"
)

//go:embed shell
var shellFiles embed.FS

// staticFiles are the JavaScript bundles built from web/js: the Cap'n
// Proto client the shell imports (gadgetd.js) and the runtime it inlines
// into every gadget frame (frame.js).
//
//go:embed static
var staticFiles embed.FS

var shellPage = template.Must(template.ParseFS(shellFiles, "shell/index.html"))

// shellCSP is the policy of the shell page: its own scripts and styles, and
// scripts with the page's nonce (the gadget frames'); requests to this
// origin only (the websockets); no frame other than srcdoc ones, which
// frame-src does not govern, so a gadget frame cannot navigate itself
// anywhere, since the embedder's frame-src rules its frames' navigations.
// Inline styles are allowed because the frames inherit this policy and
// gadget UIs use them; they load nothing.
func shellCSP(nonce string) string {
	return "default-src 'none'; script-src 'self' 'nonce-" + nonce + "'; " +
		"style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
		"frame-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
}

// newNonce returns 128 random bits, base64url (CSP allows its alphabet, and
// HTML has nothing in it to escape): a CSP nonce.
func newNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// handleShell adds the shell's routes to mux: the page at GET /, its files
// under GET /shell/ and the bundles under GET /static/.
func handleShell(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", serveShellPage)
	serveDir(mux, shellFiles, "shell")
	serveDir(mux, staticFiles, "static")
}

// serveDir serves the embedded directory dir at GET /dir/.
func serveDir(mux *http.ServeMux, files embed.FS, dir string) {
	sub, err := fs.Sub(files, dir)
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	prefix := "/" + dir + "/"
	serve := http.StripPrefix(prefix, http.FileServerFS(sub))
	mux.Handle("GET "+prefix, withSecurityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // files, not listings
			return
		}
		serve.ServeHTTP(w, r)
	})))
}

func serveShellPage(w http.ResponseWriter, r *http.Request) {
	nonce := newNonce()
	var page bytes.Buffer
	if err := shellPage.Execute(&page, struct{ Nonce string }{nonce}); err != nil {
		log.Printf("web: the shell page: %v", err) // a bug: the template is embedded
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", shellCSP(nonce))
	// A nonce is good for one response only.
	h.Set("Cache-Control", "no-store")
	setSecurityHeaders(h)
	w.Write(page.Bytes())
}

// setSecurityHeaders sets what every shell response carries: no referrer
// (the login token travels in the URL's fragment, which a referrer would
// not carry, but the page need not tell anyone where it is either), no
// MIME sniffing.
func setSecurityHeaders(h http.Header) {
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
}

func withSecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		next.ServeHTTP(w, r)
	})
}
