package deploy

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/adapter/kube/testenv"
	"github.com/regimentd/regiment/internal/config"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{})) }

const secure = "overlays/example-secure"

// renderServerConfig is what `regiment nats-config --nkey-env --listen
// 0.0.0.0:4222 --http 0.0.0.0:8222 --tls-cert /etc/nats/tls/tls.crt
// --tls-key /etc/nats/tls/tls.key` prints for the secure overlay's
// regiment.hcl (in a pod, the server listens on the pod's network).
func renderServerConfig(t *testing.T) []byte {
	t.Helper()
	cfg, err := config.LoadFile(filepath.Join(secure, "regiment.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	roles, err := bus.Permissions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	sc := bus.ServerConfig{Listen: "0.0.0.0:4222", HTTP: "0.0.0.0:8222", StoreDir: "/data", NkeyEnv: true,
		TLS: bus.ServerTLS{CertFile: "/etc/nats/tls/tls.crt", KeyFile: "/etc/nats/tls/tls.key"}}
	if err := bus.WriteServerConfig(&b, roles, sc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSecureNATSConfigIsRenderedFromThePermissionModel(t *testing.T) {
	want := renderServerConfig(t)
	path := filepath.Join(secure, "nats-server.conf")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale; regenerate it (see %s/kustomization.yaml). Want:\n%s", path, secure, want)
	}

	t.Run("nats-server accepts it with the keys in its environment", func(t *testing.T) {
		cfg, err := config.LoadFile(filepath.Join(secure, "regiment.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		roles, _ := bus.Permissions(cfg)
		for _, r := range roles {
			kp, _ := nkeys.CreateUser()
			pub, _ := kp.PublicKey()
			t.Setenv(bus.NkeyEnvVar(r.User), pub)
		}
		// The server reads its certificate while parsing: one made here
		// stands in for the Secret nats-tls.
		dir := t.TempDir()
		writeSelfSigned(t, filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
		local := filepath.Join(dir, "nats-server.conf")
		if err := os.WriteFile(local, bytes.ReplaceAll(got, []byte("/etc/nats/tls/"), []byte(dir+"/")), 0o600); err != nil {
			t.Fatal(err)
		}
		opts, err := server.ProcessConfigFile(local)
		if err != nil {
			t.Fatal(err)
		}
		if len(opts.Nkeys) != len(roles) || !opts.JetStream || opts.TLSConfig == nil {
			t.Fatalf("%d users (want %d), jetstream %v, tls %v", len(opts.Nkeys), len(roles), opts.JetStream, opts.TLSConfig != nil)
		}
	})
}

// writeSelfSigned writes a self-signed certificate for nats.regiment.svc and
// its key as PEM.
func writeSelfSigned(t *testing.T, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nats"},
		DNSNames: []string{"nats.regiment.svc"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for path, b := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: kder}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSecureOverlayOnlyAddsTheNATSBlock(t *testing.T) {
	plain, err := os.ReadFile("overlays/example/regiment.hcl")
	if err != nil {
		t.Fatal(err)
	}
	sec, err := os.ReadFile(filepath.Join(secure, "regiment.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	strip := func(src string) string {
		i := strings.Index(src, "\nnats {")
		j := strings.Index(src[i+1:], "\n}\n")
		if i < 0 || j < 0 {
			t.Fatal("no nats block")
		}
		return src[:i] + src[i+1+j+3:]
	}
	if strip(string(plain)) != strip(string(sec)) {
		t.Fatal("the secure overlay's regiment.hcl differs from the example's outside the nats block; keep them in step")
	}
}

// field walks obj along path without copying (the kustomize maps hold ints,
// which unstructured's deep copy refuses); nil when absent.
func field(obj map[string]any, path ...string) any {
	var v any = obj
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func str(obj map[string]any, path ...string) string {
	s, _ := field(obj, path...).(string)
	return s
}

// mounts returns, for the first container of a pod template, its volume
// mounts by path and its pod's volumes by name.
func mounts(t *testing.T, o *unstructured.Unstructured) (map[string]string, map[string]map[string]any) {
	t.Helper()
	containers, _ := field(o.Object, "spec", "template", "spec", "containers").([]any)
	vols, _ := field(o.Object, "spec", "template", "spec", "volumes").([]any)
	if len(containers) == 0 {
		t.Fatalf("%s has no containers", o.GetName())
	}
	byPath := map[string]string{}
	for _, m := range containers[0].(map[string]any)["volumeMounts"].([]any) {
		mm := m.(map[string]any)
		byPath[mm["mountPath"].(string)] = mm["name"].(string)
	}
	byName := map[string]map[string]any{}
	for _, v := range vols {
		vm := v.(map[string]any)
		byName[vm["name"].(string)] = vm
	}
	return byPath, byName
}

// TestSecureOverlaySignsDirectives: the secure example's Commander signs
// with a seed from its own Secret (mounted at /etc/regiment-nats) and its
// Soldiers require a signature (docs/security.md#signed-directives).
func TestSecureOverlaySignsDirectives(t *testing.T) {
	cfg, err := config.LoadFile(filepath.Join(secure, "regiment.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cfg.NATS.SigningKey, "/etc/regiment-nats/") {
		t.Errorf("directive_signing_key_file = %q, want a file of the Commander's Secret at /etc/regiment-nats", cfg.NATS.SigningKey)
	}
	if len(cfg.NATS.DirectiveKeys) == 0 {
		t.Error("no directive_keys: the Soldiers would take unsigned directives")
	}
}

func TestSecureOverlayMountsEachRoleItsOwnSecret(t *testing.T) {
	objs := testenv.Kustomize(t, secure)
	want := map[string]string{ // workload -> the Secret at /etc/regiment-nats
		"commander":       "regiment-nats-commander",
		"soldier-payment": "regiment-nats-soldier-payment",
		"soldier-fraud":   "regiment-nats-soldier-fraud",
	}
	var natsConf string
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && strings.HasPrefix(o.GetName(), "nats-config-") {
			natsConf = str(o.Object, "data", "nats-server.conf")
		}
	}
	if natsConf != string(renderServerConfig(t)) {
		t.Error("the nats-config ConfigMap does not hold the rendered nats-server.conf")
	}
	for _, o := range objs {
		switch {
		case o.GetKind() == "Deployment":
			secret, ok := want[o.GetName()]
			if !ok {
				t.Errorf("unexpected Deployment %s", o.GetName())
				continue
			}
			delete(want, o.GetName())
			byPath, byName := mounts(t, o)
			v := byName[byPath["/etc/regiment-nats"]]
			if got := str(v, "secret", "secretName"); got != secret {
				t.Errorf("%s mounts %q at /etc/regiment-nats, want Secret %s", o.GetName(), got, secret)
			}
		case o.GetKind() == "StatefulSet" && o.GetName() == "nats":
			byPath, byName := mounts(t, o)
			cm := str(byName[byPath["/etc/nats/config"]], "configMap", "name")
			tls := str(byName[byPath["/etc/nats/tls"]], "secret", "secretName")
			if !strings.HasPrefix(cm, "nats-config-") || tls != "nats-tls" {
				t.Errorf("nats mounts config %q and tls %q, want nats-config-<hash> and nats-tls", cm, tls)
			}
			containers, _ := field(o.Object, "spec", "template", "spec", "containers").([]any)
			args, _ := field(containers[0].(map[string]any), "args").([]any)
			if len(args) == 0 || args[0] != "--config=/etc/nats/config/nats-server.conf" {
				t.Errorf("nats args %q do not load the config", args)
			}
		}
	}
	for name := range want {
		t.Errorf("no Deployment %s", name)
	}
}

// TestOverlaysOnTheAPIServer has the apiserver check every object of each
// overlay (server-side apply as a dry run, strict fields) in the regiment
// namespace, which enforces Pod Security "restricted": any error or warning
// fails, and each workload's pod is created as a dry run, where Pod
// Security rejects what violates it. Namespaces are created for real.
func TestOverlaysOnTheAPIServer(t *testing.T) {
	a := newAPIServer(t)
	for _, dir := range []string{"overlays/example", secure} {
		t.Run(dir, func(t *testing.T) {
			a.t = t
			objs := testenv.Kustomize(t, dir)
			ns := find(objs, "Namespace", "regiment")
			if ns == nil || ns.GetLabels()["pod-security.kubernetes.io/enforce"] != "restricted" {
				t.Errorf("namespace regiment does not enforce Pod Security restricted: %v", ns)
			}
			a.applyAll(objs, true)
		})
	}
}
