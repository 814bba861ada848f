package kube

import (
	"slices"

	"github.com/go-logr/logr"
	"github.com/hashicorp/go-hclog"
	"k8s.io/klog/v2"
)

// RouteKlog sends client-go's own log output (klog: leader election,
// informers) to log, its informational messages at Debug and its errors at
// Warn, so a daemon logs through one logger. It sets process-wide state:
// call it once, from cmd.
func RouteKlog(log hclog.Logger) { klog.SetLogger(logr.New(&klogSink{log: log})) }

type klogSink struct {
	log hclog.Logger
	kv  []any
}

func (s *klogSink) Init(logr.RuntimeInfo) {}

func (s *klogSink) Enabled(int) bool { return s.log.IsDebug() }

func (s *klogSink) Info(_ int, msg string, kv ...any) {
	s.log.Debug(msg, append(slices.Clone(s.kv), kv...)...)
}

func (s *klogSink) Error(err error, msg string, kv ...any) {
	s.log.Warn(msg, append(append(slices.Clone(s.kv), "error", err), kv...)...)
}

func (s *klogSink) WithValues(kv ...any) logr.LogSink {
	return &klogSink{log: s.log, kv: append(slices.Clone(s.kv), kv...)}
}

func (s *klogSink) WithName(name string) logr.LogSink {
	return &klogSink{log: s.log.Named(name), kv: s.kv}
}
