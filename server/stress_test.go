package server_test

// Design: TestRandomPipelinedCallGraphsNeverKillTheServer is a randomized
// stress test of everything a client can reach. It runs rounds; each round
// starts several stress clients at once, each on its own TCP connection, and
// then proves the server still answers a health call on a fresh connection.
//
// A stress client runs a random program: every step picks a capability it
// holds (resolved or still a promise, so calls pipeline to random depth) and
// makes a random call on it, well-typed or not. What it may hold and call:
// the Gateway, Workspaces (of real, bogus, freshly minted, expiring and
// revoked tokens), Gadgets (of the
// counter, of the hostile guest that misbehaves on command, of the poisoned
// blueprint whose schema lies, of blueprints that do not exist), sessions,
// and fields of answers that are data, not capabilities. Clients abandon
// calls (short per-call deadlines, a cancel of everything at a random
// moment), close their connection mid-flight, flood one gadget past its
// queue, remove gadgets and revoke tokens other clients are using, and pass
// listeners that answer, fail, never answer, call back into the gadget, or
// are not listeners at all. After each round every gadget is removed and
// every minted token revoked, so that quotas never fill in a long soak.
//
// Goroutines and ownership: a stress client, and everything it holds, is
// owned by its one goroutine; listener callbacks run on go-capnp's goroutines
// and touch only the listener and the capability it was given its own
// reference to. What clients share is the round (the ids of its gadgets and
// the tokens minted in it, under a mutex) and the tally (under a mutex). Every call has a deadline:
// each client's whole program lives under one context with a timeout, so
// every wait ends; a round that still does not end is a hang, reported with
// a dump of every goroutine.
//
// Randomness: the run's seed (logged; GADGETD_STRESS_SEED replays it)
// derives one generator per client per round, so a client's choices do not
// depend on scheduling. What the server answers does, so a replay is a
// strong hint, not an exact rerun.
//
// Two hazards of go-capnp v3.1.0-alpha.2's client side shape the clients
// (they are not server bugs): Future.Client, asked twice for one field of an
// answer that has not arrived, returns with the promise locked, so every
// pipelined capability is taken once and kept (answer.capAt); and a call
// queued on a local promise ignores its context while rpc.Conn.Close waits
// for the listener handler waiting on it, so listeners never wait past
// their context.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// Environment variables that set a stress run's seed and length.
const (
	stressSeedEnv     = "GADGETD_STRESS_SEED"
	stressRoundsEnv   = "GADGETD_STRESS_ROUNDS"
	stressDurationEnv = "GADGETD_STRESS_DURATION" // a time.Duration; rounds run until it has passed
)

// Default lengths: make test must stay quick on a shared 2-core machine,
// with and without -race.
const (
	defaultStressRounds = 8
	shortStressRounds   = 4
)

// Bounds of the stress.
const (
	stressCallTimeout       = 1500 * time.Millisecond // a guest call
	stressClientCallTimeout = 300 * time.Millisecond  // a guest's call to a client's listener
	stressClientLife        = 6 * time.Second         // a stress client's whole program
	stressHealthTimeout     = 30 * time.Second        // generous: -race on a busy machine
	stressRoundLimit        = 90 * time.Second        // past it, a round has hung
	stressGoroutineSlack    = 25
)

// Whatever random graph of pipelined calls clients send, and however its
// guests misbehave, the server survives and answers a health call after
// every round.
func TestRandomPipelinedCallGraphsNeverKillTheServer(t *testing.T) {
	plan := stressPlanFromEnv(t)
	// A crash kills the test binary before t.Log output is shown, so the
	// seed goes to stderr at once too.
	fmt.Fprintf(os.Stderr, "stress: seed %d (replay: %s=%d)\n", plan.seed, stressSeedEnv, plan.seed)
	t.Logf("seed %d, %s", plan.seed, plan)

	h := start(t, t.TempDir(),
		server.WithWasmOptions(
			wasmhost.WithCallTimeout(stressCallTimeout),
			wasmhost.WithClientCallTimeout(stressClientCallTimeout),
			wasmhost.WithQueueLimit(4),
			wasmhost.WithMemoryLimit(64<<20),
			wasmhost.WithIdleTimeout(time.Second),
		),
		server.WithIdleShellTimeout(time.Second),
	)
	run := &stressRun{
		h:       h,
		mallory: h.token("mallory"),
		trudy:   h.token("trudy"),
		health:  h.token("health"),
		tally:   newTally(),
	}
	// mallory may create hostile and poisoned gadgets; trudy only counters,
	// and finds mallory's gadgets absent.
	ws := h.login(t, run.mallory)
	for _, b := range []blueprint.Bundle{hostileBundle(t), poisonedBundle(t)} {
		if err := install(t, ws, b); err != nil {
			t.Fatal(err)
		}
	}
	_, run.healthGadget = create(t, h.login(t, run.health), "counter")

	run.requireHealthy(t, 0)
	baseline := settledGoroutines()

	began := time.Now()
	var rounds int
	for n := 1; plan.more(n, time.Since(began)); n++ {
		run.round(t, n, plan.seed)
		run.requireHealthy(t, n)
		rounds = n
	}
	t.Logf("%d rounds in %v", rounds, time.Since(began).Round(time.Millisecond))
	run.tally.log(t)
	if run.tally.count("ok") == 0 || run.tally.count("failed") == 0 {
		t.Errorf("the stress made %d calls that succeeded and %d that failed: it did not drive the server through both", run.tally.count("ok"), run.tally.count("failed"))
	}
	requireGoroutinesBackNear(t, baseline)
}

// stressPlan is how long a run is and how it is seeded.
type stressPlan struct {
	seed     uint64
	rounds   int           // when duration is zero
	duration time.Duration // rounds run until it has passed
}

func stressPlanFromEnv(t *testing.T) stressPlan {
	p := stressPlan{seed: rand.Uint64(), rounds: defaultStressRounds}
	if testing.Short() {
		p.rounds = shortStressRounds
	}
	if s := os.Getenv(stressSeedEnv); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", stressSeedEnv, s, err)
		}
		p.seed = seed
	}
	if s := os.Getenv(stressRoundsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number of rounds", stressRoundsEnv, s)
		}
		p.rounds = n
	}
	if s := os.Getenv(stressDurationEnv); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive duration such as 10m", stressDurationEnv, s)
		}
		p.duration = d
	}
	return p
}

func (p stressPlan) more(round int, elapsed time.Duration) bool {
	if p.duration > 0 {
		return round == 1 || elapsed < p.duration
	}
	return round <= p.rounds
}

func (p stressPlan) String() string {
	if p.duration > 0 {
		return "rounds for " + p.duration.String()
	}
	return strconv.Itoa(p.rounds) + " rounds"
}

// stressRun is the server under stress and what every round shares.
type stressRun struct {
	h                      *harness
	mallory, trudy, health string
	healthGadget           string
	tally                  *tally
}

// round runs one round of concurrent stress clients and then tidies up
// after them.
func (s *stressRun) round(t *testing.T, n int, seed uint64) {
	r := &stressRound{run: s, n: n, blueprintOf: map[string]string{}}
	s.createRoundGadgets(t, r)

	gen := rand.New(rand.NewPCG(seed, uint64(n)))
	clients := 3 + gen.IntN(4)
	t.Logf("round %d: %d clients", n, clients)
	var wg sync.WaitGroup
	for i := range clients {
		c := &stressClient{
			round: r,
			rng:   rand.New(rand.NewPCG(seed, uint64(n)<<32|uint64(i+1))),
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run()
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(stressRoundLimit):
		dumpGoroutines()
		t.Fatalf("round %d (seed %d): its clients did not finish within %v although every call has a deadline: a hang (goroutines dumped to stderr)", n, seed, stressRoundLimit)
	}

	for _, token := range []string{s.mallory, s.trudy} {
		if err := s.tidy(token); err != nil {
			dumpGoroutines()
			t.Fatalf("round %d (seed %d): tidying up after it: %v (goroutines dumped to stderr)", n, seed, err)
		}
	}
}

// createRoundGadgets gives the round a gadget of each kind for clients to
// find by id: the flood target, and guests that misbehave.
func (s *stressRun) createRoundGadgets(t *testing.T, r *stressRound) {
	ctx, cancel := context.WithTimeout(context.Background(), stressHealthTimeout)
	defer cancel()
	conn := s.dial(t, ctx)
	defer conn.Close()
	ws, release := conn.Login(ctx, s.mallory)
	defer release()
	for _, bp := range []string{"counter", "hostile", "poisoned"} {
		f, release := ws.Create(ctx, func(p schema.Workspace_create_Params) error { return p.SetBlueprint(bp) })
		res, err := f.Struct()
		if err != nil {
			t.Fatalf("round %d: creating its %s gadget: %v", r.n, bp, err)
		}
		info, _ := res.Info()
		id, _ := info.Id()
		r.add(id, bp)
		release()
	}
}

// tidy removes every gadget of token's user and revokes every token but
// token, so that quotas never fill however many rounds run. A gadget that
// will not go is a finding too.
func (s *stressRun) tidy(token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), stressHealthTimeout)
	defer cancel()
	conn, err := client.Dial(ctx, s.h.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, token)
	defer release()

	ids, err := gadgetIDs(ctx, ws)
	if err != nil {
		return err
	}
	for _, id := range ids {
		f, release := removeByID(ctx, ws, id)
		_, err := f.Struct()
		release()
		if err == nil {
			continue
		}
		// A removal a client gave up on may still be running on the
		// server and take the gadget first; a gadget still listed that
		// cannot be removed is a finding.
		left, lerr := gadgetIDs(ctx, ws)
		if lerr != nil || slices.Contains(left, id) {
			return fmt.Errorf("removing gadget %s: %w", id, err)
		}
	}

	ids, err = otherTokenIDs(ctx, ws)
	if err != nil {
		return err
	}
	for _, id := range ids {
		f, release := ws.RevokeToken(ctx, func(p schema.Workspace_revokeToken_Params) error { return p.SetId(id) })
		_, err := f.Struct()
		release()
		if err == nil {
			continue
		}
		// So may a revocation.
		left, lerr := otherTokenIDs(ctx, ws)
		if lerr != nil || slices.Contains(left, id) {
			return fmt.Errorf("revoking token %s: %w", id, err)
		}
	}
	return nil
}

func gadgetIDs(ctx context.Context, ws schema.Workspace) ([]string, error) {
	f, release := ws.Gadgets(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return nil, fmt.Errorf("listing gadgets: %w", err)
	}
	list, _ := res.Gadgets()
	ids := make([]string, list.Len())
	for i := range ids {
		info, _ := list.At(i).Info()
		ids[i], _ = info.Id()
	}
	return ids, nil
}

// otherTokenIDs lists the ids of the tokens of ws's user but the one ws
// was logged in with.
func otherTokenIDs(ctx context.Context, ws schema.Workspace) ([]string, error) {
	f, release := ws.Tokens(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return nil, fmt.Errorf("listing tokens: %w", err)
	}
	list, _ := res.Tokens()
	var ids []string
	for i := range list.Len() {
		if !list.At(i).Current() {
			id, _ := list.At(i).Id()
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (s *stressRun) dial(t *testing.T, ctx context.Context) *client.Conn {
	c, err := client.Dial(ctx, s.h.addr)
	if err != nil {
		dumpGoroutines()
		t.Fatalf("the server no longer accepts connections: %v", err)
	}
	return c
}

// requireHealthy proves the server serves a fresh client: login, a list of
// gadgets, and an increment of a counter no stress client can reach.
func (s *stressRun) requireHealthy(t *testing.T, round int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stressHealthTimeout)
	defer cancel()
	conn := s.dial(t, ctx)
	defer conn.Close()
	err := func() error {
		lf, release := conn.Gateway().Login(ctx, func(p schema.Gateway_login_Params) error { return p.SetToken(s.health) })
		defer release()
		if _, err := lf.Struct(); err != nil {
			return fmt.Errorf("login: %w", err)
		}
		ws := lf.Workspace()
		gf, release := ws.Gadgets(ctx, nil)
		defer release()
		if _, err := gf.Struct(); err != nil {
			return fmt.Errorf("gadgets: %w", err)
		}
		of, release := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(s.healthGadget) })
		defer release()
		sf, release := of.Gadget().Open(ctx, nil)
		defer release()
		inc, release := counterpb.Counter(sf.Session()).Increment(ctx, func(p counterpb.Counter_increment_Params) error {
			p.SetBy(1)
			return nil
		})
		defer release()
		if _, err := inc.Struct(); err != nil {
			return fmt.Errorf("increment: %w", err)
		}
		return nil
	}()
	if err != nil {
		dumpGoroutines()
		t.Fatalf("after round %d the server does not answer a health call: %v (goroutines dumped to stderr)", round, err)
	}
}

// stressRound is what the clients of one round share.
type stressRound struct {
	run *stressRun
	n   int

	mu          sync.Mutex
	ids         []string
	blueprintOf map[string]string // gadget id -> blueprint name
	tokens      []mintedToken     // tokens clients minted this round
}

type mintedToken struct{ token, id string }

func (r *stressRound) addToken(token, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tokens = append(r.tokens, mintedToken{token, id})
}

// pickToken returns a token some client minted this round (it may have
// expired or been revoked since), if there is one.
func (r *stressRound) pickToken(rng *rand.Rand) (mintedToken, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.tokens) == 0 {
		return mintedToken{}, false
	}
	return r.tokens[rng.IntN(len(r.tokens))], true
}

func (r *stressRound) add(id, blueprint string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, id)
	r.blueprintOf[id] = blueprint
}

// pick returns a random gadget id of the round with its blueprint, or a
// made-up id.
func (r *stressRound) pick(rng *rand.Rand) (id, blueprint string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ids) == 0 || rng.IntN(10) == 0 {
		return "no-such-gadget-" + strconv.Itoa(rng.IntN(100)), "nope"
	}
	id = r.ids[rng.IntN(len(r.ids))]
	return id, r.blueprintOf[id]
}

// kind is what a stress client believes a capability it holds to be.
type kind int

const (
	kindGateway kind = iota
	kindWorkspace
	kindGadget
	kindSession
	kindJunk // data, a field past the end, a capability of unknown type
)

// node is a capability a stress client holds, borrowed from the answer it
// came from (released with it).
type node struct {
	kind      kind
	blueprint string // of a gadget or session
	cap       capnp.Client
}

// stressClient is one connection's random program; its goroutine owns it.
type stressClient struct {
	round *stressRound
	rng   *rand.Rand

	ctx      context.Context
	nodes    []node
	answers  []*answer     // every call's answer, to pipeline onto its fields
	pending  []pendingCall // calls whose answer the program has not read
	releases []capnp.ReleaseFunc
	cancels  []context.CancelFunc
	// done is closed when the program ends, releasing listeners that never
	// answer.
	done chan struct{}
}

type pendingCall struct {
	op     string
	answer *capnp.Future
}

// answer is a call's answer with the capabilities pipelined onto it.
type answer struct {
	future *capnp.Future
	// caps holds each pipelined capability by its field path: asked a
	// second time for the same path before the answer has arrived,
	// go-capnp v3.1.0-alpha.2's Future.Client returns with the promise
	// still locked, and the next call on it deadlocks the client.
	caps map[string]capnp.Client
}

// capAt returns the capability at path in a's results, pipelined if a has
// not arrived yet.
func (a *answer) capAt(path ...uint16) capnp.Client {
	key := fmt.Sprint(path)
	if c, ok := a.caps[key]; ok {
		return c
	}
	f := a.future
	for _, field := range path {
		f = f.Field(field, nil)
	}
	c := f.Client()
	a.caps[key] = c
	return c
}

func (c *stressClient) run() {
	ctx, cancel := context.WithTimeout(context.Background(), stressClientLife)
	defer cancel()
	c.ctx, c.done = ctx, make(chan struct{})
	conn, err := client.Dial(ctx, c.round.run.h.addr)
	if err != nil {
		c.round.run.tally.add("dial", err)
		return
	}
	defer conn.Close()

	// Some clients give up on everything at a random moment; some hang up.
	switch c.rng.IntN(8) {
	case 0:
		defer time.AfterFunc(c.randomMoment(), cancel).Stop()
	case 1:
		defer time.AfterFunc(c.randomMoment(), func() { conn.Close() }).Stop()
	}

	c.nodes = append(c.nodes, node{kind: kindGateway, cap: capnp.Client(conn.Gateway())})
	c.login()
	switch c.rng.IntN(6) {
	case 0:
		c.flood()
	case 1:
		c.removeMidCall()
	default:
		for range 10 + c.rng.IntN(30) {
			c.step()
			if len(c.pending) > 0 && c.rng.IntN(3) == 0 {
				c.await(c.rng.IntN(len(c.pending)))
			}
		}
	}
	for len(c.pending) > 0 {
		c.await(len(c.pending) - 1)
	}
	close(c.done)
	for _, cancelCall := range slices.Backward(c.cancels) {
		cancelCall()
	}
	for _, release := range slices.Backward(c.releases) {
		release()
	}
}

func (c *stressClient) randomMoment() time.Duration {
	return time.Duration(c.rng.IntN(1500)) * time.Millisecond
}

// callCtx is the context of one call: usually the client's, sometimes one
// that gives up after a few milliseconds (an abandoned call).
func (c *stressClient) callCtx() context.Context {
	if c.rng.IntN(8) != 0 {
		return c.ctx
	}
	ctx, cancel := context.WithTimeout(c.ctx, time.Duration(1+c.rng.IntN(300))*time.Millisecond)
	c.cancels = append(c.cancels, cancel)
	return ctx
}

// sent records a call's answer: the program may read it later, pipeline onto
// its fields, and releases it when it ends.
func (c *stressClient) sent(op string, f *capnp.Future, release capnp.ReleaseFunc) *answer {
	a := &answer{future: f, caps: map[string]capnp.Client{}}
	c.answers = append(c.answers, a)
	c.pending = append(c.pending, pendingCall{op, f})
	c.releases = append(c.releases, release)
	return a
}

func (c *stressClient) hold(k kind, blueprint string, cap capnp.Client) node {
	n := node{kind: k, blueprint: blueprint, cap: cap}
	c.nodes = append(c.nodes, n)
	return n
}

// await reads the answer of pending call i and tallies it.
func (c *stressClient) await(i int) {
	p := c.pending[i]
	c.pending = slices.Delete(c.pending, i, i+1)
	_, err := p.answer.Struct()
	c.round.run.tally.add(p.op, err)
}

func (c *stressClient) token() string {
	switch c.rng.IntN(7) {
	case 0:
		return "bogus-token"
	case 1:
		return c.round.run.trudy
	case 2:
		if m, ok := c.round.pickToken(c.rng); ok {
			return m.token
		}
		return c.round.run.mallory
	default:
		return c.round.run.mallory
	}
}

// login logs in, waiting for the answer or pipelining onto it.
func (c *stressClient) login() node {
	f, release := schema.Gateway(c.nodes[0].cap).Login(c.callCtx(), func(p schema.Gateway_login_Params) error {
		return p.SetToken(c.token())
	})
	a := c.sent("login", f.Future, release)
	ws := c.hold(kindWorkspace, "", a.capAt(0))
	c.hold(kindJunk, "", a.capAt(1)) // user: a struct
	if c.rng.IntN(2) == 0 {
		c.await(len(c.pending) - 1)
	}
	return ws
}

// step makes one random call on a random capability the client holds.
func (c *stressClient) step() {
	n := c.nodes[c.rng.IntN(len(c.nodes))]
	switch c.rng.IntN(10) {
	case 0:
		c.wrongCall(n)
		return
	case 1:
		c.pipelineOntoAField()
		return
	}
	switch n.kind {
	case kindGateway:
		if c.rng.IntN(2) == 0 {
			c.login()
		} else {
			c.chain()
		}
	case kindWorkspace:
		c.workspaceCall(schema.Workspace(n.cap))
	case kindGadget:
		c.gadgetCall(n)
	case kindSession:
		c.sessionCall(n)
	default:
		c.wrongCall(n)
	}
}

// chain pipelines login(t).workspace.create(bp).gadget.open().session.call
// in one go.
func (c *stressClient) chain() {
	ws := c.login()
	g := c.create(schema.Workspace(ws.cap))
	s := c.open(g)
	c.sessionCall(s)
}

func (c *stressClient) create(ws schema.Workspace) node {
	bp := []string{"counter", "counter", "hostile", "poisoned", "nope"}[c.rng.IntN(5)]
	f, release := ws.Create(c.callCtx(), func(p schema.Workspace_create_Params) error { return p.SetBlueprint(bp) })
	a := c.sent("workspace.create", f.Future, release)
	g := c.hold(kindGadget, bp, a.capAt(0))
	c.hold(kindJunk, "", a.capAt(1)) // info: a struct
	if c.rng.IntN(2) == 0 {
		// Learn the id, so that other clients can find and remove it.
		c.pending = c.pending[:len(c.pending)-1]
		res, err := f.Struct()
		c.round.run.tally.add("workspace.create", err)
		if err == nil {
			info, _ := res.Info()
			id, _ := info.Id()
			c.round.add(id, bp)
		}
	}
	return g
}

func (c *stressClient) open(g node) node {
	f, release := schema.Gadget(g.cap).Open(c.callCtx(), nil)
	a := c.sent("gadget.open", f.Future, release)
	return c.hold(kindSession, g.blueprint, a.capAt(0))
}

func (c *stressClient) workspaceCall(ws schema.Workspace) {
	ctx := c.callCtx()
	switch c.rng.IntN(9) {
	case 0, 1:
		c.create(ws)
	case 2, 3:
		id, bp := c.round.pick(c.rng)
		f, release := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
		a := c.sent("workspace.open", f.Future, release)
		c.hold(kindGadget, bp, a.capAt(0))
	case 4:
		// Another client may be calling it right now.
		id, _ := c.round.pick(c.rng)
		f, release := removeByID(ctx, ws, id)
		c.sent("gadget.remove", f.Future, release)
	case 5:
		f, release := ws.Gadgets(ctx, nil)
		c.sent("workspace.gadgets", f.Future, release)
	case 6:
		f, release := ws.Blueprints(ctx, nil)
		c.sent("workspace.blueprints", f.Future, release)
	case 7:
		// Some tokens expire within the round, while clients use them.
		f, release := ws.NewToken(ctx, func(p schema.Workspace_newToken_Params) error {
			p.SetValidForSeconds(uint64(c.rng.IntN(3)))
			return p.SetLabel("stress")
		})
		c.sent("workspace.newToken", f.Future, release)
		c.pending = c.pending[:len(c.pending)-1]
		res, err := f.Struct()
		c.round.run.tally.add("workspace.newToken", err)
		if err == nil {
			token, _ := res.Token()
			info, _ := res.Info()
			id, _ := info.Id()
			c.round.addToken(token, id)
		}
	case 8:
		// Other clients may be using it right now.
		m, ok := c.round.pickToken(c.rng)
		if !ok {
			return
		}
		f, release := ws.RevokeToken(ctx, func(p schema.Workspace_revokeToken_Params) error { return p.SetId(m.id) })
		c.sent("workspace.revokeToken", f.Future, release)
	}
}

func (c *stressClient) gadgetCall(g node) {
	ctx := c.callCtx()
	gadget := schema.Gadget(g.cap)
	switch c.rng.IntN(7) {
	case 0, 1, 2:
		c.open(g)
	case 3:
		f, release := gadget.Info(ctx, nil)
		c.sent("gadget.info", f.Future, release)
	case 4:
		f, release := gadget.Ui(ctx, nil)
		c.sent("gadget.ui", f.Future, release)
	case 5:
		f, release := gadget.Schema(ctx, nil)
		c.sent("gadget.schema", f.Future, release)
	case 6:
		f, release := gadget.Logs(ctx, func(p schema.Gadget_logs_Params) error {
			p.SetLimit(uint32(c.rng.IntN(1000)))
			return nil
		})
		c.sent("gadget.logs", f.Future, release)
	}
}

// hostileCommands are what the stress asks the hostile guest (and the
// poisoned one, the same guest) to do; the cheap ones are listed more often.
var hostileCommands = []string{
	"ok", "ok", "ok", "id", "whoami",
	"panic", "panic", "exit", "exit", "put-then-panic", "put-then-fail",
	"sleep:", "sleep:", "sleep:", "huge:", "huge:",
	"spin", "hostloop", "alloc",
}

func (c *stressClient) sessionCall(s node) {
	ctx := c.callCtx()
	switch s.blueprint {
	case "hostile", "poisoned":
		cmd := hostileCommands[c.rng.IntN(len(hostileCommands))]
		switch cmd {
		case "sleep:":
			cmd += strconv.Itoa(c.rng.IntN(2 * int(stressCallTimeout/time.Millisecond)))
		case "huge:":
			cmd += strconv.Itoa([]int{1 << 10, 1 << 20, 9 << 20}[c.rng.IntN(3)])
		}
		f, release := schema.Storage(s.cap).Get(ctx, func(p schema.Storage_get_Params) error { return p.SetKey(cmd) })
		name, _, _ := strings.Cut(cmd, ":")
		a := c.sent("guest "+name, f.Future, release)
		// value is data; the poisoned schema calls it a capability.
		c.hold(kindJunk, "", a.capAt(0))
		if c.rng.IntN(2) == 0 {
			c.wrongCall(c.nodes[len(c.nodes)-1])
		}
		return
	}
	counter := counterpb.Counter(s.cap)
	switch c.rng.IntN(4) {
	case 0, 1:
		f, release := counter.Increment(ctx, func(p counterpb.Counter_increment_Params) error {
			p.SetBy(int64(c.rng.IntN(3)))
			return nil
		})
		c.sent("counter.increment", f.Future, release)
	case 2:
		f, release := counter.Get(ctx, nil)
		c.sent("counter.get", f.Future, release)
	case 3:
		l, how := c.listener(s)
		// The params take a reference of their own: a call that fails
		// before its params are built (its context is done, say) must
		// not leak the listener.
		f, release := counter.Watch(ctx, func(p counterpb.Counter_watch_Params) error {
			return p.SetListener(counterpb.Listener(keepUntilExit(capnp.Client(l).AddRef())))
		})
		c.sent("counter.watch("+how+")", f.Future, release)
	}
}

// listener returns a listener to pass to watch, and what it does. The
// client releases it when its program ends.
func (c *stressClient) listener(session node) (counterpb.Listener, string) {
	var changed func(ctx context.Context) error
	var how string
	switch c.rng.IntN(6) {
	case 0:
		how, changed = "answers", func(context.Context) error { return nil }
	case 1:
		how, changed = "fails", func(context.Context) error { return errors.New("this listener fails") }
	case 2:
		done := c.done
		how, changed = "never answers", func(ctx context.Context) error {
			select {
			case <-ctx.Done():
			case <-done:
			}
			return errors.New("gave up")
		}
	case 3:
		// A listener that calls back into the gadget that is notifying it.
		session := session.cap.AddRef()
		c.releases = append(c.releases, session.Release)
		how, changed = "calls back", func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, stressClientCallTimeout*2)
			defer cancel()
			f, release := counterpb.Counter(session).Increment(ctx, nil)
			select {
			case <-f.Done():
				defer release()
				_, err := f.Struct()
				return err
			case <-ctx.Done():
				// A call queued on a local promise does not end with
				// its context, and rpc.Conn.Close waits for this
				// handler: waiting for the answer (or its release)
				// here can deadlock the client library.
				go release()
				return ctx.Err()
			}
		}
	case 4:
		return counterpb.Listener{}, "null"
	default:
		// Any capability the client holds, of whatever type, resolved or not.
		n := c.nodes[c.rng.IntN(len(c.nodes))]
		return counterpb.Listener(n.cap), "not a listener"
	}
	l := &stressListener{changed: changed}
	listener := counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, l), l, nil))
	c.releases = append(c.releases, listener.Release)
	return listener, how
}

// sentInParams keeps every capability reference a stress client put in a
// call's params reachable until the test binary exits. go-capnp
// v3.1.0-alpha.2's client side rarely drops such a reference without
// releasing it (one listener in about 300 rounds, one in 65 under -race;
// the cause inside rpc.Conn is not found yet), and the package's leak check
// (internal/leakcheck) would report it when the garbage collector finds it.
// The reference belongs to the client's own rpc.Conn, not to the server:
// keeping these reachable hides that client-side leak only, while every
// capability the server creates is still checked.
var sentInParams struct {
	sync.Mutex
	caps []capnp.Client
}

func keepUntilExit(c capnp.Client) capnp.Client {
	sentInParams.Lock()
	defer sentInParams.Unlock()
	sentInParams.caps = append(sentInParams.caps, c)
	return c
}

type stressListener struct {
	changed func(context.Context) error
}

func (l *stressListener) Changed(ctx context.Context, _ counterpb.Listener_changed) error {
	return l.changed(ctx)
}

// interfaceIDs are the interfaces a wrong call claims to call.
var interfaceIDs = []uint64{
	schema.Gateway_TypeID, schema.Workspace_TypeID, schema.Gadget_TypeID,
	schema.Storage_TypeID, counterpb.Counter_TypeID, counterpb.Listener_TypeID,
	0xdeadbeefcafe,
}

// wrongCall calls a method of a random interface, usually not n's, or an
// unknown method of it.
func (c *stressClient) wrongCall(n node) {
	iface := interfaceIDs[c.rng.IntN(len(interfaceIDs))]
	method := uint16(c.rng.IntN(10))
	if c.rng.IntN(4) == 0 {
		method = 65535
	}
	ans, release := n.cap.SendCall(c.callCtx(), capnp.Send{
		Method:   capnp.Method{InterfaceID: iface, MethodID: method, InterfaceName: "stress", MethodName: "wrong"},
		ArgsSize: capnp.ObjectSize{},
	})
	c.sent("wrong method", ans.Future(), release)
}

// pipelineOntoAField takes a random field, to a random depth, of a random
// answer (most are data, past the end, or not there) and calls it.
func (c *stressClient) pipelineOntoAField() {
	if len(c.answers) == 0 {
		return
	}
	a := c.answers[c.rng.IntN(len(c.answers))]
	path := make([]uint16, 1+c.rng.IntN(3))
	for i := range path {
		path[i] = uint16(c.rng.IntN(4))
	}
	c.wrongCall(c.hold(kindJunk, "", a.capAt(path...)))
}

// flood pipelines many open().session.increment() onto one counter gadget
// of the round, past its queue.
func (c *stressClient) flood() {
	ws := schema.Workspace(c.nodes[1].cap)
	id := c.round.floodTarget()
	gf, release := ws.Open(c.ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	gadget := schema.Gadget(c.sent("workspace.open", gf.Future, release).capAt(0))
	for range 50 + c.rng.IntN(250) {
		of, release := gadget.Open(c.ctx, nil)
		session := counterpb.Counter(c.sent("flood open", of.Future, release).capAt(0))
		f, release := session.Increment(c.ctx, nil)
		c.sent("flood increment", f.Future, release)
	}
}

// removeMidCall waits a moment, while other clients call the round's
// gadgets, and removes some of them.
func (c *stressClient) removeMidCall() {
	ws := schema.Workspace(c.nodes[1].cap)
	select {
	case <-time.After(c.randomMoment()):
	case <-c.ctx.Done():
	}
	for range 1 + c.rng.IntN(3) {
		id, _ := c.round.pick(c.rng)
		f, release := removeByID(c.ctx, ws, id)
		c.sent("removal mid-call", f.Future, release)
	}
}

// floodTarget is the id of the round's first counter.
func (r *stressRound) floodTarget() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range r.ids {
		if r.blueprintOf[id] == "counter" {
			return id
		}
	}
	return "none"
}

// tally counts the outcomes of calls by kind.
type tally struct {
	mu     sync.Mutex
	counts map[string]int // "op: outcome"
}

func newTally() *tally { return &tally{counts: map[string]int{}} }

func (t *tally) add(op string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.counts[op+": "+outcome(err)]++
}

// count sums the counts of an outcome over every op.
func (t *tally) count(outcome string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	var n int
	for k, v := range t.counts {
		if strings.HasSuffix(k, ": "+outcome) {
			n += v
		}
	}
	return n
}

func (t *tally) log(tb testing.TB) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range t.counts {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "\n\t%6d  %s", t.counts[k], k)
	}
	tb.Logf("outcomes:%s", b.String())
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, context.Canceled):
		return "abandoned"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	}
	return exc.TypeOf(err).String()
}

// settledGoroutines returns the number of goroutines once it has stopped
// changing (the health client's connection takes a moment to wind down), or
// the lowest seen within a few seconds.
func settledGoroutines() int {
	lowest, last, same := runtime.NumGoroutine(), -1, 0
	for range 50 {
		n := runtime.NumGoroutine()
		lowest = min(lowest, n)
		if n == last {
			if same++; same == 5 {
				break
			}
		} else {
			last, same = n, 0
		}
		time.Sleep(100 * time.Millisecond)
	}
	return lowest
}

// requireGoroutinesBackNear waits for the goroutines the stress started to
// end: connections, calls, listeners and idle gadgets all wind down on
// timers, so it retries rather than asserting once.
func requireGoroutinesBackNear(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= baseline+stressGoroutineSlack {
			t.Logf("goroutines: %d after the stress, %d before", n, baseline)
			return
		}
		if time.Now().After(deadline) {
			dumpGoroutines()
			t.Fatalf("%d goroutines a minute after the stress ended, %d before it: a leak (goroutines dumped to stderr)", n, baseline)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func dumpGoroutines() { pprof.Lookup("goroutine").WriteTo(os.Stderr, 1) }
