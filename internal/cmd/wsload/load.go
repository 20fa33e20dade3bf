package main

// Design: run starts one goroutine per session and moves them through three
// phases together. Each sets up (at most cfg.settingUp at once) and marks
// itself ready, failed or not; once all are ready, they make calls until
// the common end of the hold and mark themselves done; once all are done,
// run compares what the watchers heard with what the increments sent, and
// only then tells the sessions to close, so a change still in flight cannot
// be mistaken for a lost one. Counters shared by the sessions are atomic;
// the latency samples and the error tally each have their mutex.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/internal/latency"
	"github.com/gadgetd/gadgetd/internal/loadtest"
	"github.com/gadgetd/gadgetd/internal/wsclient"
	"github.com/gadgetd/gadgetd/schema"
)

// config is one measurement's shape; main fills it from flags.
type config struct {
	gadgetd, examples string
	sessions          int
	users             int
	gadgetsPerUser    int
	hold, interval    time.Duration
	incrementEvery    int
	watchEvery        int
	localAddrs        int
	settingUp         int
	maxConns          int
	after             []time.Duration
	serverLog         io.Writer // nil: os.Stderr
}

// Bounds that turn a hang into a counted error.
const (
	setupTimeout = 2 * time.Minute
	callTimeout  = 30 * time.Second
)

// result is what one measurement saw.
type result struct {
	cfg             config
	setUp, held     int
	setupTime       time.Duration
	calls, offered  int64
	callErrors      int64
	p50, p99        time.Duration
	watchers        int
	heard, expected int64
	warnings        int64 // the server's, while the sessions were up
	closeWarnings   int64 // and as they closed, until the last RSS reading
	baseline, peak  int64
	rssAfter        []int64 // at cfg.after
	errors          *tally
}

// failure says why the measurement failed, or returns nil.
func (r *result) failure() error {
	var why []string
	if n := r.cfg.sessions - r.held; n > 0 {
		why = append(why, fmt.Sprintf("%d of %d sessions failed or were lost", n, r.cfg.sessions))
	}
	if r.callErrors > 0 {
		why = append(why, fmt.Sprintf("%d calls erred", r.callErrors))
	}
	if r.heard != r.expected {
		why = append(why, fmt.Sprintf("the watchers heard %d changes, the increments sent %d", r.heard, r.expected))
	}
	if r.warnings > 0 {
		why = append(why, fmt.Sprintf("the server logged %d warnings or errors while the sessions were up (above)", r.warnings))
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%s\n%s", strings.Join(why, "; "), r.errors)
}

// run measures cfg against a server it starts and stops, writing the
// report to out as it goes.
func run(ctx context.Context, cfg config, out io.Writer) (*result, error) {
	if cfg.sessions < 1 || cfg.users < 1 || cfg.gadgetsPerUser < 1 || cfg.interval <= 0 || cfg.incrementEvery < 1 || cfg.watchEvery < 1 || cfg.settingUp < 1 {
		return nil, errors.New("-sessions, -users, -gadgets, -interval, -increment-every, -watch-every and -setting-up must be positive")
	}
	if cfg.localAddrs < 1 || cfg.localAddrs > 254 {
		return nil, errors.New("-local-addrs must be 1 to 254 (127.0.0.1 to 127.0.0.254)")
	}
	if cfg.maxConns == 0 {
		cfg.maxConns = 2*cfg.sessions + 64
	}
	users := make([]string, cfg.users)
	for i := range users {
		users[i] = fmt.Sprintf("load%d", i)
	}
	opts := []loadtest.Option{loadtest.WithExamples(cfg.examples), loadtest.WithUsers(users...),
		loadtest.WithConfig(fmt.Sprintf("[connections]\nmax = %d\n[users]\nmax_connections = %d\n", cfg.maxConns, cfg.maxConns))}
	if cfg.serverLog != nil {
		opts = append(opts, loadtest.WithStderr(cfg.serverLog))
	}
	srv, err := loadtest.Start(cfg.gadgetd, opts...)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	fmt.Fprintf(out, "wsload: %d shell sessions (a /ws and a /ws/frame websocket each) on %d counters of %d users, from %d loopback addresses; server connections.max %d\n",
		cfg.sessions, cfg.users*cfg.gadgetsPerUser, cfg.users, cfg.localAddrs, cfg.maxConns)

	// Session i shows gadgets[i%len(gadgets)]: the sessions spread evenly
	// over every user's gadgets.
	gadgets := make([]*gadget, 0, cfg.users*cfg.gadgetsPerUser)
	for _, u := range users {
		ids, err := loadtest.CreateCounters(ctx, srv.CapnpAddr, srv.Tokens[u], cfg.gadgetsPerUser, "wsload")
		if err != nil {
			return nil, fmt.Errorf("user %s: %w", u, err)
		}
		for _, id := range ids {
			gadgets = append(gadgets, &gadget{id: id, token: srv.Tokens[u]})
		}
	}

	time.Sleep(2 * time.Second) // let start-up garbage settle
	r := &result{cfg: cfg, errors: &tally{}}
	if r.baseline, err = srv.RSS(); err != nil {
		return nil, err
	}
	stopPeak := srv.SamplePeak(200 * time.Millisecond)

	l := &load{
		cfg:        cfg,
		wsURL:      "ws://" + srv.HTTPAddr,
		errors:     r.errors,
		setupSlots: make(chan struct{}, cfg.settingUp),
		setupOK:    make(chan struct{}),
		closing:    make(chan struct{}),
	}
	l.ready.Add(cfg.sessions)
	l.done.Add(cfg.sessions)
	setupStart := time.Now()
	var exited sync.WaitGroup
	for i := range cfg.sessions {
		g := gadgets[i%len(gadgets)]
		watch := (i/len(gadgets))%cfg.watchEvery == 0
		local := net.IPv4(127, 0, 0, byte(1+i%cfg.localAddrs))
		exited.Go(func() { l.session(i, g, watch, local) })
	}
	l.ready.Wait()
	r.setupTime = time.Since(setupStart)
	r.setUp = cfg.sessions - int(l.setupFailed.Load())
	fmt.Fprintf(out, "set up %d of %d sessions in %s; making calls for %s\n", r.setUp, cfg.sessions, r.setupTime.Round(time.Millisecond), cfg.hold)
	l.begin = time.Now()
	close(l.setupOK)
	l.done.Wait()

	for _, g := range gadgets {
		r.watchers += int(g.watchers.Load())
		r.expected += g.increments.Load() * g.watchers.Load()
	}
	r.heard = l.heard.Load()
	r.warnings = srv.Warnings()
	close(l.closing)
	exited.Wait()
	closed := time.Now()
	r.peak = stopPeak()
	r.held = r.setUp - int(l.lost.Load())
	r.calls, r.offered, r.callErrors = l.calls.Load(), l.offered.Load(), l.callErrors.Load()
	r.p50, r.p99 = l.latency.percentile(50), l.latency.percentile(99)
	r.print(out)
	err = srv.RSSAfter(closed, cfg.after, func(d time.Duration, n int64) {
		r.rssAfter = append(r.rssAfter, n)
		fmt.Fprintf(out, "%-28s %8.1f MiB   (%+.1f MiB against the baseline)\n", fmt.Sprintf("VmRSS %s after closing", d), loadtest.MiB(n), loadtest.MiB(n-r.baseline))
	})
	r.closeWarnings = srv.Warnings() - r.warnings
	fmt.Fprintf(out, "%-28s %d\n", "server warnings (closing)", r.closeWarnings)
	return r, err
}

// gadget is one counter the sessions share.
type gadget struct {
	id, token  string
	watchers   atomic.Int64 // sessions that subscribed to it
	increments atomic.Int64 // that succeeded during the hold
}

// load is what the sessions of one measurement share.
type load struct {
	cfg    config
	wsURL  string
	errors *tally

	setupSlots  chan struct{}  // one per session setting up
	ready       sync.WaitGroup // a session is set up, or failed to be
	setupOK     chan struct{}  // closed when all are; calls start
	begin       time.Time      // when setupOK closed
	done        sync.WaitGroup // a session has made its calls
	closing     chan struct{}  // closed when sessions may close
	setupFailed atomic.Int64
	lost        atomic.Int64 // sessions whose connection ended early

	calls, offered, callErrors atomic.Int64
	heard                      atomic.Int64
	latency                    recorder
}

// session is one shell session: set up, calls, close.
func (l *load) session(i int, g *gadget, watch bool, local net.IP) {
	ready, done := sync.OnceFunc(l.ready.Done), sync.OnceFunc(l.done.Done)
	defer done()
	defer ready() // a session that failed must not hold the others

	l.setupSlots <- struct{}{}
	s, err := l.setUp(g, watch, local)
	<-l.setupSlots
	if err != nil {
		err = s.withAbortReason(err)
		s.close()
		l.setupFailed.Add(1)
		l.errors.add("setting up", err)
		return
	}
	defer s.close()
	ready()
	<-l.setupOK

	// The sessions' calls are spread evenly over one interval.
	next := l.begin.Add(l.cfg.interval * time.Duration(i) / time.Duration(l.cfg.sessions))
	end := l.begin.Add(l.cfg.hold)
	for n := 0; next.Before(end); n++ {
		time.Sleep(time.Until(next))
		l.offered.Add(1)
		if err := l.call(s, g, (i+n)%l.cfg.incrementEvery == 0); err != nil {
			l.callErrors.Add(1)
			l.errors.add("call", err)
		}
		// A call slower than the interval skips the turns it overran.
		for next = next.Add(l.cfg.interval); next.Before(time.Now()) && next.Before(end); next = next.Add(l.cfg.interval) {
			l.offered.Add(1)
		}
	}
	if s.ended() {
		l.lost.Add(1)
		l.errors.add("session", errors.New("a websocket ended before the session closed it"))
	}
	done()
	<-l.closing
}

// setUp does what the shell does to show a gadget: /ws, login, open, a
// frame ticket, /ws/frame; and, to watch, subscribes over the frame's
// websocket. The login, open and frameTicket are pipelined: one round
// trip. It returns what it set up, to be closed, with its error too.
func (l *load) setUp(g *gadget, watch bool, local net.IP) (*shellSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	s := &shellSession{}
	var err error
	if s.shell, err = wsclient.Dial(ctx, l.wsURL+"/ws", wsclient.WithLocalAddr(local)); err != nil {
		return s, fmt.Errorf("/ws: %w", err)
	}
	// The bootstrap question lives as long as the connection: canceling
	// its context would Finish it and break what is pipelined onto it.
	gateway := schema.Gateway(s.shell.Bootstrap(context.Background()))
	s.releases = append(s.releases, gateway.Release)
	login, release := gateway.Login(ctx, func(p schema.Gateway_login_Params) error { return p.SetToken(g.token) })
	s.releases = append(s.releases, release)
	opened, release := login.Workspace().Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(g.id) })
	s.releases = append(s.releases, release)
	tf, release := opened.Gadget().FrameTicket(ctx, nil)
	res, err := tf.Struct()
	var ticket string
	if err == nil {
		ticket, err = res.Ticket()
	}
	release()
	if err != nil {
		return s, fmt.Errorf("login, open, frameTicket: %w", err)
	}

	if s.frame, err = wsclient.Dial(ctx, l.wsURL+"/ws/frame?ticket="+url.QueryEscape(ticket), wsclient.WithLocalAddr(local)); err != nil {
		return s, fmt.Errorf("/ws/frame: %w", err)
	}
	s.counter = counterpb.Counter(s.frame.Bootstrap(context.Background()))
	s.releases = append(s.releases, s.counter.Release)
	if watch {
		wf, release := s.counter.Watch(ctx, func(p counterpb.Counter_watch_Params) error {
			return p.SetListener(loadtest.CountingListener(&l.heard))
		})
		s.releases = append(s.releases, release) // holds the subscription's handle
		if _, err := wf.Struct(); err != nil {
			return s, fmt.Errorf("watch: %w", err)
		}
		g.watchers.Add(1)
	}
	gf, release := s.counter.Get(ctx, nil)
	_, err = gf.Struct()
	release()
	if err != nil {
		return s, fmt.Errorf("first get: %w", err)
	}
	return s, nil
}

// call makes one call on s's counter and records how long it took.
func (l *load) call(s *shellSession, g *gadget, increment bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	start := time.Now()
	var err error
	if increment {
		f, release := s.counter.Increment(ctx, nil)
		_, err = f.Struct()
		release()
		if err == nil {
			g.increments.Add(1)
		}
	} else {
		f, release := s.counter.Get(ctx, nil)
		_, err = f.Struct()
		release()
	}
	if err != nil {
		return err
	}
	l.latency.add(time.Since(start))
	l.calls.Add(1)
	return nil
}

// shellSession is one session's two websockets and what it holds on them.
type shellSession struct {
	shell, frame *wsclient.Conn
	counter      counterpb.Counter
	releases     []func()
}

// abortWait bounds how long a failed session waits for the Abort that may
// say why its connection ended.
const abortWait = time.Second

// withAbortReason adds to err the reason the server gave for ending one of
// s's websockets, if it gave one.
func (s *shellSession) withAbortReason(err error) error {
	for _, c := range []*wsclient.Conn{s.shell, s.frame} {
		if c == nil {
			continue
		}
		select {
		case <-c.Done():
		case <-time.After(abortWait):
		}
		if reason := c.AbortReason(); reason != "" {
			return fmt.Errorf("%w (the server: %s)", err, reason)
		}
	}
	return err
}

// ended reports whether either websocket ended by itself.
func (s *shellSession) ended() bool {
	for _, c := range []*wsclient.Conn{s.shell, s.frame} {
		select {
		case <-c.Done():
			return true
		default:
		}
	}
	return false
}

// close releases what s holds and closes its websockets, the frame's first,
// as a shell closing a gadget's frame and then its page would.
func (s *shellSession) close() {
	for i := len(s.releases) - 1; i >= 0; i-- {
		s.releases[i]()
	}
	s.releases = nil
	for _, c := range []*wsclient.Conn{s.frame, s.shell} {
		if c != nil {
			c.Close()
		}
	}
}

// recorder is a latency.Recorder for concurrent use.
type recorder struct {
	mu sync.Mutex
	r  latency.Recorder
}

func (r *recorder) add(d time.Duration) {
	r.mu.Lock()
	r.r.Add(d)
	r.mu.Unlock()
}

func (r *recorder) percentile(p float64) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Percentile(p)
}

// tally counts errors by what failed and what was said, so a thousand
// sessions failing the same way print one line.
type tally struct {
	mu     sync.Mutex
	counts map[string]int
}

func (t *tally) add(what string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = make(map[string]int)
	}
	t.counts[what+": "+addrs.ReplaceAllString(err.Error(), "ADDR")]++
}

// addrs matches the host:port pairs that make otherwise equal errors of
// different sessions differ.
var addrs = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}:\d+\b`)

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := make([]string, 0, len(t.counts))
	for msg, n := range t.counts {
		lines = append(lines, fmt.Sprintf("  %5d × %s", n, msg))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
