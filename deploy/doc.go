// Package deploy holds no code: it is the Kubernetes manifests (a kustomize
// base, components and overlays, and the Helm chart in chart/regiment) and
// the tests that keep them honest. The tests check that
// overlays/example-secure builds, that its nats-server.conf is exactly what
// `regiment nats-config` renders from its regiment.hcl (one source for the
// permission model: bus.Permissions), that nats-server accepts it; that the
// chart renders (helm v4's engine) for its defaults and the values in
// testdata/, each with a config that matches its values; that the chart
// runs the Soldiers of the config it ships and the real `helm template`
// refuses values naming other domains, naming the domain (its scanner of
// the HCL reads the domains and modes config.Parse reads); that the
// daemons get --log-format from logFormat and, exactly when
// http.tokenSecret is set, --http-token-file naming the file its Secret is
// mounted as, with the ServiceMonitor sending the same token, that the
// schema refuses a bad logFormat or token Secret, and that a release
// upgraded with --reuse-values from a chart without these values still
// renders (text logs, no token); that every
// metric the Grafana dashboard and the alerts query is one the daemons
// export, and each alert fires in its case and not otherwise; and, with a
// control plane (internal/adapter/kube/testenv), that the apiserver admits every object of
// the chart and of both overlays (server-side apply, strict fields) into
// namespaces enforcing Pod Security "restricted", with no warning at all;
// and that the components pool and balloons grant the Commander exactly
// the rights the chart grants for the same features, which the apiserver
// confirms (SubjectAccessReview, and the Commander's own pool.Watcher and
// Balloons run as its ServiceAccount); that a Soldier in recommend mode
// cannot write an HPA (403) and may once active; and that what `helm
// uninstall` leaves is what docs/kubernetes.md says, and its commands
// delete it.
//
// The image the manifests run is built by deploy/image (`make image`).
package deploy
