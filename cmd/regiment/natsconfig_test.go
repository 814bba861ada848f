package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

func TestNATSConfigRendersOneUserPerRole(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "cluster.hcl")
	if err := os.WriteFile(cfgPath, []byte(validateGoodConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	seeds := filepath.Join(dir, "seeds")
	run := func() (string, string) {
		var stdout, stderr bytes.Buffer
		if code := runNATSConfig(context.Background(), []string{"--config", cfgPath, "--seeds", seeds}, &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	first, created := run()
	users := []string{"commander", "operator", "soldier-payment", "soldier-fraud"}
	for _, u := range users {
		path := filepath.Join(seeds, u+".nk")
		if !strings.Contains(created, path) {
			t.Errorf("stderr does not report creating %s:\n%s", path, created)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
		}
		seed, _ := os.ReadFile(path)
		kp, err := nkeys.FromSeed(bytes.TrimSpace(seed))
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		if !strings.Contains(first, pub) {
			t.Errorf("the config lacks %s's public key %s", u, pub)
		}
		if strings.Contains(first, string(bytes.TrimSpace(seed))) {
			t.Fatalf("the config contains %s's seed", u)
		}
	}

	t.Run("the server listens on loopback without monitoring by default", func(t *testing.T) {
		if !strings.Contains(first, `listen: "127.0.0.1:4222"`) || strings.Contains(first, "http:") {
			t.Fatalf("want listen on 127.0.0.1 and no http:\n%s", first)
		}
	})

	t.Run("a directive signing key is made and its public key printed", func(t *testing.T) {
		seed, err := os.ReadFile(filepath.Join(seeds, "directive-signing.nk"))
		if err != nil {
			t.Fatal(err)
		}
		kp, err := nkeys.FromSeed(bytes.TrimSpace(seed))
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		if !strings.Contains(created, `directive_keys = ["`+pub+`"]`) {
			t.Fatalf("stderr does not give the Soldiers' directive_keys:\n%s", created)
		}
		if strings.Contains(first, pub) {
			t.Fatal("the signing key is a server user")
		}
	})

	t.Run("an override signing key is made and its public key printed", func(t *testing.T) {
		seed, err := os.ReadFile(filepath.Join(seeds, "override-signing.nk"))
		if err != nil {
			t.Fatal(err)
		}
		kp, err := nkeys.FromSeed(bytes.TrimSpace(seed))
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		if !strings.Contains(created, `override_keys = ["`+pub+`"]`) {
			t.Fatalf("stderr does not give the daemons' override_keys:\n%s", created)
		}
		if strings.Contains(first, pub) {
			t.Fatal("the signing key is a server user")
		}
	})

	t.Run("seeds are reused, so the output is stable", func(t *testing.T) {
		second, created := run()
		if second != first || strings.Contains(created, "created ") {
			t.Fatalf("second run differs (stderr %q)", created)
		}
	})

	t.Run("nats-server accepts it", func(t *testing.T) {
		path := filepath.Join(dir, "nats-server.conf")
		if err := os.WriteFile(path, []byte(first), 0o644); err != nil {
			t.Fatal(err)
		}
		opts, err := server.ProcessConfigFile(path)
		if err != nil {
			t.Fatalf("%v\n%s", err, first)
		}
		if len(opts.Nkeys) != len(users) || !opts.JetStream {
			t.Fatalf("%d nkey users, jetstream %v; want %d and jetstream", len(opts.Nkeys), opts.JetStream, len(users))
		}
	})
}

func TestNATSConfigUsageErrors(t *testing.T) {
	for name, args := range map[string][]string{
		"no config":          {"--seeds", t.TempDir()},
		"no seeds":           {"--config", "x.hcl"},
		"argument":           {"--config", "x.hcl", "--seeds", "s", "extra"},
		"seeds and nkey-env": {"--config", "x.hcl", "--seeds", "s", "--nkey-env"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := runNATSConfig(context.Background(), args, &stdout, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
		})
	}
}

func TestNATSConfigNkeyEnvMatchesTheDeployFile(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"--config", "../../deploy/overlays/example-secure/regiment.hcl", "--nkey-env",
		"--listen", "0.0.0.0:4222", "--http", "0.0.0.0:8222",
		"--tls-cert", "/etc/nats/tls/tls.crt", "--tls-key", "/etc/nats/tls/tls.key"}
	if code := runNATSConfig(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want, err := os.ReadFile("../../deploy/overlays/example-secure/nats-server.conf")
	if err != nil {
		t.Fatal(err)
	}
	if stdout.String() != string(want) {
		t.Fatalf("the command the overlay documents does not reproduce its nats-server.conf:\n%s", stdout.String())
	}
}
