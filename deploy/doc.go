// Package deploy holds no code: it is the Kubernetes manifests (a kustomize
// base, components and overlays) and the tests that keep them honest. The
// tests check that overlays/example-secure builds, that its nats-server.conf
// is exactly what `regiment nats-config` renders from its regiment.hcl (one
// source for the permission model: bus.Permissions), that nats-server accepts
// it, and, with a control plane (kube/testenv), that the apiserver admits
// every object (server-side dry run, strict fields).
package deploy
