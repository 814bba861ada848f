package daemon

import (
	"github.com/hashicorp/go-hclog"

	"github.com/regimentd/regiment/internal/adapter/bus"
	"github.com/regimentd/regiment/internal/core/domains"
)

// CommanderSigning sets how the Commander's connection signs directives:
// with the key of nats { directive_signing_key_file }, or not at all, which
// is logged at Warn because Soldiers then cannot tell its directives from a
// forger's.
func CommanderSigning(o *bus.ConnectOptions, n domains.NATS, log hclog.Logger) error {
	if n.SigningKey == "" {
		log.Warn("directives are not signed: set nats { directive_signing_key_file } (docs/security.md#signed-directives)")
		return nil
	}
	s, err := bus.LoadSigner(n.SigningKey)
	if err != nil {
		return err
	}
	o.Signer = s
	log.Info("directives signed", "key", s.PublicKey())
	return nil
}

// OverrideVerification sets which keys the Commander's or a Soldier's
// connection requires on overrides, live or stored: those of nats {
// override_keys }, or none, which is logged at Warn because a pin is then
// taken from anyone who may send on the override subject.
func OverrideVerification(o *bus.ConnectOptions, n domains.NATS, log hclog.Logger) {
	requireKeys(&o.OverrideKeys, n.OverrideKeys, "override", "override_keys", "signed-overrides", log)
}

// OperatorSigning sets how the operator's connection (regiment override)
// signs overrides: with the key of nats { override_signing_key_file }, or
// not at all.
func OperatorSigning(o *bus.ConnectOptions, n domains.NATS) error {
	if n.OverrideSigningKey == "" {
		return nil
	}
	s, err := bus.LoadOverrideSigner(n.OverrideSigningKey)
	if err != nil {
		return err
	}
	o.OverrideSigner = s
	return nil
}

// SoldierVerification sets which keys a Soldier's connection requires on
// directives: those of nats { directive_keys }, or none, which is logged at
// Warn because anyone who may publish on the directive subject can then
// steer the Soldier.
func SoldierVerification(o *bus.ConnectOptions, n domains.NATS, log hclog.Logger) {
	requireKeys(&o.DirectiveKeys, n.DirectiveKeys, "directive", "directive_keys", "signed-directives", log)
}

// requireKeys sets *dst to keys, the nats { setting } of what's
// signatures, and logs at Info that they are required, or, with no keys,
// at Warn that they are not checked (docs/security.md#anchor says why).
func requireKeys(dst *[]string, keys []string, what, setting, anchor string, log hclog.Logger) {
	if len(keys) == 0 {
		log.Warn(what + " signatures are not checked: set nats { " + setting + " } (docs/security.md#" + anchor + ")")
		return
	}
	*dst = keys
	log.Info(what+" signatures required", "keys", len(keys))
}
