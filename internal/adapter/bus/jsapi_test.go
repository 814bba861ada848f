package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// jsAPISubjects is every JetStream API subject nats-server 2.x serves
// (server/jetstream_api.go), each instantiated for the cluster's two
// buckets and a stream of nobody's, with a consumer name and, where the API
// takes one in the subject, a filter or key of each domain and of all.
func jsAPISubjects() []string {
	const api = "$JS.API."
	dir, ovr := "regiment_prod_directives", "regiment_prod_overrides"
	streams := []string{"KV_" + dir, "KV_" + ovr, "OTHER"}
	out := []string{
		api + "INFO", api + "STREAM.NAMES", api + "STREAM.LIST", api + "META.LEADER.STEPDOWN",
		api + "SERVER.REMOVE", api + "SERVER.EVACUATE", api + "META.RESCUE", api + "ACCOUNT.PURGE.$G",
	}
	for _, s := range streams {
		for _, op := range []string{"CREATE", "UPDATE", "INFO", "DELETE", "PURGE", "SNAPSHOT", "RESTORE",
			"MSG.DELETE", "MSG.GET", "PEER.REMOVE", "PEER.EVACUATE", "CANCEL_MOVE", "LEADER.STEPDOWN"} {
			out = append(out, api+"STREAM."+op+"."+s)
		}
		out = append(out, api+"DIRECT.GET."+s, api+"CONSUMER.CREATE."+s, api+"CONSUMER.NAMES."+s, api+"CONSUMER.LIST."+s,
			api+"ACCOUNT.STREAM.MOVE."+s+".x", api+"ACCOUNT.STREAM.CANCEL_MOVE."+s+".x")
		for _, op := range []string{"CREATE", "DURABLE.CREATE", "INFO", "DELETE", "PAUSE", "MSG.NEXT", "RESET", "UNPIN",
			"LEADER.STEPDOWN", "PEER.REMOVE", "PEER.EVACUATE"} {
			out = append(out, api+"CONSUMER."+op+"."+s+".c1")
		}
	}
	for _, b := range []string{dir, ovr} {
		for _, key := range []string{"payment", "fraud", "payment.checkout-0", "fraud.scorer-0", "*", ">", "payment.*", "fraud.*"} {
			out = append(out, api+"DIRECT.GET.KV_"+b+".$KV."+b+"."+key)
			out = append(out, api+"CONSUMER.CREATE.KV_"+b+".c1.$KV."+b+"."+key)
		}
	}
	return out
}

// TestJetStreamAPIPermissionsOnARealServer sends every JetStream API subject
// as each role on a server loaded with the rendered config and checks that
// the server lets through exactly the table's: the calls nats.go's key-value
// client makes for the role's own buckets and keys, nothing else.
func TestJetStreamAPIPermissionsOnARealServer(t *testing.T) {
	const api = "$JS.API."
	dir, ovr := "regiment_prod_directives", "regiment_prod_overrides"
	// allowed is the table: the subjects of jsAPISubjects each role may send.
	// A Soldier binds and gets its own keys; no create, update, delete or
	// purge of any stream, no get by body-given subject, and no consumer at
	// all, not even on its own keys (a consumer delivers wherever its
	// creator says: issue 34).
	soldier := func(d string) []string {
		return []string{
			api + "STREAM.INFO.KV_" + dir, api + "STREAM.INFO.KV_" + ovr,
			api + "DIRECT.GET.KV_" + dir + ".$KV." + dir + "." + d,
			api + "DIRECT.GET.KV_" + ovr + ".$KV." + ovr + "." + d,
			api + "DIRECT.GET.KV_" + ovr + ".$KV." + ovr + "." + d + ".*",
			api + "DIRECT.GET.KV_" + ovr + ".$KV." + ovr + "." + d + map[string]string{"payment": ".checkout-0", "fraud": ".scorer-0"}[d],
		}
	}
	var everyOverride []string
	for _, key := range []string{"payment", "fraud", "payment.checkout-0", "fraud.scorer-0", "*", ">", "payment.*", "fraud.*"} {
		everyOverride = append(everyOverride,
			api+"DIRECT.GET.KV_"+ovr+".$KV."+ovr+"."+key,
			api+"CONSUMER.CREATE.KV_"+ovr+".c1.$KV."+ovr+"."+key)
	}
	operator := append([]string{api + "STREAM.INFO.KV_" + ovr, api + "CONSUMER.DELETE.KV_" + ovr + ".c1"}, everyOverride...)
	commander := append([]string{
		api + "INFO",
		api + "STREAM.INFO.KV_" + dir, api + "STREAM.CREATE.KV_" + dir, api + "STREAM.UPDATE.KV_" + dir,
		api + "STREAM.INFO.KV_" + ovr, api + "STREAM.CREATE.KV_" + ovr, api + "STREAM.UPDATE.KV_" + ovr,
		api + "CONSUMER.DELETE.KV_" + ovr + ".c1",
		api + "DIRECT.GET.KV_" + dir + ".$KV." + dir + ".payment", api + "DIRECT.GET.KV_" + dir + ".$KV." + dir + ".fraud",
		api + "DIRECT.GET.KV_" + dir + ".$KV." + dir + ".*", api + "DIRECT.GET.KV_" + dir + ".$KV." + dir + ".>",
	}, everyOverride...)
	allowed := map[string][]string{
		CommanderUser:          commander,
		OperatorUser:           operator,
		SoldierUser("payment"): soldier("payment"),
		SoldierUser("fraud"):   soldier("fraud"),
	}

	s := startSecured(t, ServerTLS{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.as(t, CommanderUser).EnsureBuckets(ctx); err != nil {
		t.Fatal(err)
	}
	subjects := jsAPISubjects()
	for _, user := range []string{CommanderUser, OperatorUser, SoldierUser("payment"), SoldierUser("fraud")} {
		t.Run(user, func(t *testing.T) {
			t.Parallel()
			got := sendAll(t, s, user, subjects)
			for _, subj := range subjects {
				want := slices.Contains(allowed[user], subj)
				if got[subj] != want {
					t.Errorf("%s: %s let through %v, want %v", user, subj, got[subj], want)
				}
			}
		})
	}
}

// sendAll sends an empty request on each subject as user, with a raw
// connection, and returns which the server let through (an answer came,
// even an error) rather than refused (a permissions violation naming the
// subject). Empty requests change nothing: each API call refuses one.
func sendAll(t *testing.T, s *secured, user string, subjects []string) map[string]bool {
	t.Helper()
	var mu sync.Mutex
	denied := map[string]bool{}
	answered := map[string]bool{}
	seed, err := nats.NkeyOptionFromSeed(s.seeds[user])
	if err != nil {
		t.Fatal(err)
	}
	inbox := InboxPrefix(testCluster, user)
	nc, err := nats.Connect(s.url, seed, nats.CustomInboxPrefix(inbox), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if !errors.Is(err, nats.ErrPermissionViolation) {
			return
		}
		// `... Permissions Violation for Publish to "<subject>"`
		if _, q, ok := strings.Cut(err.Error(), `Publish to "`); ok {
			mu.Lock()
			denied[strings.TrimSuffix(strings.TrimSpace(q), `"`)] = true
			mu.Unlock()
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Subscribe(inbox+".r.*", func(m *nats.Msg) {
		mu.Lock()
		answered[subjects[atoi(m.Subject[strings.LastIndexByte(m.Subject, '.')+1:])]] = true
		mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	for i, subj := range subjects {
		if err := nc.PublishRequest(subj, fmt.Sprintf("%s.r.%d", inbox, i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, user+"'s answers and refusals", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, subj := range subjects {
			if !denied[subj] && !answered[subj] {
				return false
			}
		}
		return true
	})
	mu.Lock()
	defer mu.Unlock()
	got := map[string]bool{}
	for _, subj := range subjects {
		if denied[subj] && answered[subj] {
			t.Errorf("%s: %s both refused and answered", user, subj)
		}
		got[subj] = answered[subj]
	}
	return got
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestSoldierCannotEscalate replays the escalation of issue 16 with a
// Soldier's credential on a server loaded with the rendered config: adding
// another domain's directive subject to the override stream, a republish
// rule onto another domain's directive subject, a stream of its own over
// directives, and reading or writing another domain's pins. Each is refused,
// and the override stream is unchanged.
func TestSoldierCannotEscalate(t *testing.T) {
	s := startSecured(t, ServerTLS{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	commander := s.as(t, CommanderUser)
	if err := commander.EnsureBuckets(ctx); err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct {
		domain, app string
		n           int
	}{{"payment", "checkout-0", 3}, {"fraud", "scorer-0", 4}} {
		if err := commander.StoreOverride(ctx, replicaPin(o.domain, o.app, o.n)); err != nil {
			t.Fatal(err)
		}
	}
	ob, _ := OverrideBucket(testCluster)
	before, err := commander.js.Stream(ctx, "KV_"+ob)
	if err != nil {
		t.Fatal(err)
	}
	payment := s.as(t, SoldierUser("payment"))
	fraudDirective, _ := DirectiveSubject(testCluster, "fraud")
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 500*time.Millisecond) }

	t.Run("stream update adding subjects and a republish rule is refused", func(t *testing.T) {
		cfg := before.CachedInfo().Config
		cfg.Subjects = append(cfg.Subjects, fraudDirective, "regiment.prod.report.>")
		cfg.RePublish = &jetstream.RePublish{Source: "$KV." + ob + ".payment.>", Destination: fraudDirective}
		sctx, c := short()
		defer c()
		if _, err := payment.js.UpdateStream(sctx, cfg); err == nil {
			t.Fatal("payment's soldier updated the override stream")
		}
	})
	t.Run("a stream of its own over other domains' subjects is refused", func(t *testing.T) {
		sctx, c := short()
		defer c()
		if _, err := payment.js.CreateStream(sctx, jetstream.StreamConfig{Name: "SPY", Subjects: []string{"regiment.prod.>"},
			RePublish: &jetstream.RePublish{Source: ">", Destination: fraudDirective}}); err == nil {
			t.Fatal("payment's soldier created a stream")
		}
	})
	t.Run("another domain's pins cannot be read, listed or written", func(t *testing.T) {
		kv, err := payment.overrides(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		for name, call := range map[string]func(context.Context) error{
			"get":          func(c context.Context) error { _, err := kv.Get(c, "fraud.scorer-0"); return err },
			"put":          func(c context.Context) error { _, err := kv.Put(c, "fraud.scorer-0", []byte("{}")); return err },
			"delete":       func(c context.Context) error { return kv.Delete(c, "fraud.scorer-0") },
			"list all":     func(c context.Context) error { _, err := kv.Keys(c); return err },
			"list fraud's": func(c context.Context) error { _, err := kv.ListKeysFiltered(c, "fraud.*"); return err },
			"message get": func(c context.Context) error {
				_, err := payment.nc.RequestWithContext(c, "$JS.API.STREAM.MSG.GET.KV_"+ob, []byte(`{"last_by_subj":"$KV.`+ob+`.fraud.scorer-0"}`))
				return err
			},
			"overrides of":  func(c context.Context) error { _, err := payment.Overrides(c, "fraud"); return err },
			"share pin put": func(c context.Context) error { _, err := kv.Put(c, "payment", []byte("{}")); return err },
		} {
			sctx, c := short()
			err := call(sctx)
			c()
			if err == nil {
				t.Errorf("%s: payment's soldier was let through", name)
			}
		}
		// Its own pins it reads.
		got, err := payment.Overrides(ctx, "payment")
		if err != nil || len(got) != 1 || got[0].App != "payment/checkout-0" {
			t.Fatalf("payment's soldier lists %+v, %v; want its one pin", got, err)
		}
	})
	after, err := commander.js.Stream(ctx, "KV_"+ob)
	if err != nil {
		t.Fatal(err)
	}
	a, b := after.CachedInfo().Config, before.CachedInfo().Config
	if !slices.Equal(a.Subjects, b.Subjects) || a.RePublish != nil {
		t.Fatalf("the override stream changed: subjects %q, republish %+v", a.Subjects, a.RePublish)
	}
	if fraud, err := commander.Overrides(ctx, "fraud"); err != nil || len(fraud) != 1 || fraud[0].Replicas == nil || *fraud[0].Replicas != 4 {
		t.Fatalf("fraud's pins are now %+v, %v", fraud, err)
	}
}
