package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// selfSignedCert writes a certificate for 127.0.0.1 and its key to dir and
// returns their paths.
func selfSignedCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gadgetd test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// gadgetdEnv runs a client subcommand with exactly the given GADGETD_
// variables.
func gadgetdEnv(t *testing.T, bin string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GADGETD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestServeOverTLSServesTLSClientsAndRefusesPlaintextOnes(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	out, err := exec.Command(bin, "user", "add", "alice", "--data", data).Output()
	if err != nil {
		t.Fatalf("user add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	certFile, keyFile := selfSignedCert(t, t.TempDir())
	capnpAddr, httpAddr, _, _ := startServe(t, bin, "--data", data, "--tls-cert", certFile, "--tls-key", keyFile)
	hostport, ok := strings.CutPrefix(capnpAddr, "tls://")
	if !ok {
		t.Fatalf("capnp address %q has no tls:// scheme", capnpAddr)
	}

	tlsEnv := []string{"GADGETD_ADDR=" + capnpAddr, "GADGETD_TOKEN=" + token, "GADGETD_TLS_CA=" + certFile}
	if out, err := gadgetdEnv(t, bin, tlsEnv, "token", "ls"); err != nil || !strings.Contains(out, "user add") {
		t.Fatalf("token ls over TLS: %v\n%s", err, out)
	}
	// Without the CA the self-signed server is not trusted.
	if out, err := gadgetdEnv(t, bin, tlsEnv[:2], "ls"); err == nil || !strings.Contains(out, "certificate") {
		t.Fatalf("TLS without trusting the server's certificate: %v %q", err, out)
	}
	// A plaintext client fails with an error, not a hang, and the server
	// keeps serving TLS clients.
	if out, err := gadgetdEnv(t, bin, []string{"GADGETD_ADDR=" + hostport, "GADGETD_TOKEN=" + token}, "ls"); err == nil || strings.Contains(out, "ID") {
		t.Fatalf("a plaintext client of the TLS listener: %v %q", err, out)
	}
	if out, err := gadgetdEnv(t, bin, []string{"GADGETD_ADDR=" + hostport, "GADGETD_TOKEN=" + token, "GADGETD_TLS_CA=" + certFile}, "ls"); err == nil || !strings.Contains(out, "does not start with tls://") {
		t.Fatalf("GADGETD_TLS_CA with a plaintext address: %v %q", err, out)
	}
	if out, err := gadgetdEnv(t, bin, tlsEnv, "ls"); err != nil {
		t.Fatalf("ls over TLS after the plaintext client: %v\n%s", err, out)
	}

	// The HTTP listener serves HTTPS with the same certificate.
	pemBytes, _ := os.ReadFile(certFile)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemBytes)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	if !strings.HasPrefix(httpAddr, "https://") {
		t.Fatalf("http address %q has no https:// scheme", httpAddr)
	}
	resp, err := hc.Get(httpAddr + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz over TLS: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("/healthz over TLS = %q", body)
	}
	plain := &http.Client{Timeout: 30 * time.Second}
	if resp, err := plain.Get("http://" + strings.TrimPrefix(httpAddr, "https://") + "/healthz"); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("plaintext HTTP to the TLS listener answered 200 %q", body)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestPlaintextListenerBeyondLoopbackIsWarnedAbout(t *testing.T) {
	certFile, keyFile := selfSignedCert(t, t.TempDir())
	tlsConfig, err := loadTLSConfig(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr string
		tls  *tls.Config
		warn bool
	}{
		{"0.0.0.0:0", nil, true},
		{"127.0.0.1:0", nil, false},
		{"0.0.0.0:0", tlsConfig, false},
	} {
		var logs syncBuffer
		ln, err := listen("capnp", tc.addr, tc.tls, slog.New(slog.NewTextHandler(&logs, nil)), nil)
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "without TLS")
		if warned != tc.warn {
			t.Errorf("listen %s (TLS %v): warned %v, want %v; log: %q", tc.addr, tc.tls != nil, warned, tc.warn, logs.String())
		}
	}
}

func TestServeWarnsOfAPlaintextListenerBeyondLoopback(t *testing.T) {
	bin := buildBinary(t)
	cmd := exec.Command(bin, "serve", "--data", t.TempDir(), "--capnp", "0.0.0.0:0", "--http", "127.0.0.1:0")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
	defer watchdog.Stop()
	lines := bufio.NewScanner(stdout)
	for i := 0; i < 2 && lines.Scan(); i++ {
	}
	stopServe(t, cmd)
	logs := stderr.String()
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "without TLS") || !strings.Contains(logs, "listener=capnp") {
		t.Fatalf("no warning about the capnp listener on 0.0.0.0 in:\n%s", logs)
	}
	if strings.Contains(logs, "listener=http") {
		t.Fatalf("a warning about the loopback http listener:\n%s", logs)
	}
}

func TestHalfATLSConfigurationAndMissingTLSFilesFailClearly(t *testing.T) {
	for _, args := range [][]string{{"serve", "--tls-cert", "cert.pem"}, {"serve", "--tls-key", "key.pem"}} {
		code, _, stderr := runInProcess(args...)
		if code != 1 || !strings.Contains(stderr, "set both --tls-cert and --tls-key") {
			t.Errorf("gadgetd %v: exit %d\n%s", args, code, stderr)
		}
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	code, _, stderr := runInProcess("serve", "--data", t.TempDir(), "--tls-cert", missing, "--tls-key", missing)
	if code != 1 || !strings.Contains(stderr, "loading the TLS certificate and key") || !strings.Contains(stderr, "missing.pem") {
		t.Errorf("serve with a missing certificate: exit %d\n%s", code, stderr)
	}
}
