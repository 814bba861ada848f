// Package kube connects Regiment to a Kubernetes cluster with client-go: it
// implements the Soldier's soldier.Actuator and soldier.Observer, keeps each
// Soldier's lease (the Soldier lock), and reverts the HPAs of Soldiers that
// are gone.
//
// Mapping (domains.Config.Workload): each app of a domain is one workload, a
// Deployment (default) or StatefulSet, in the app's namespace (the app set's
// workload.namespace, else kubernetes.namespace, else "default"), named after
// the app ("checkout", or "checkout-3" for app 3 of a set of several), whose
// pods match an equality label selector (default "app=<name>"), with an HPA of
// the same name unless workload.hpa names another. "{i}" in a set's workload
// name, selector and hpa stands for the app's index in the set.
//
// Actuation (Actuator): replicas writes spec.replicas through the workload's
// scale subresource. hpa-bounds writes the app's HPA bounds (see Bounds):
// min = target, max = ceil(target x (1 + hpa_headroom)) within the app's
// max_replicas, so the HPA stays the fast loop between Regiment's bounds. Every
// write is read-compare-apply: no write when the cluster already holds the
// value, a token-bucket rate limit, then a server-side apply with the field
// manager "regiment" owning only the fields written. A write that still
// fails fails for its app alone (soldier.WriteErrors, the reason from
// WriteFailure); the Soldier retries it with backoff, and Events records a
// RegimentWriteFailed Event on the app's workload. An app whose workload or
// HPA is not found is observed Missing and not written.
//
// Other owners (ForeignOwner, pure; Observer.Ownership reads the informers):
// an HPA or a KEDA ScaledObject on the app's workload, or another field
// manager owning the written field (an applier always; an imperative writer
// once Regiment wrote the field), sets the app's replicas; the Observer
// reports it (AppStatus.Owner, soldier.AppObservation.ForeignOwner), the
// executor holds the app, and the Actuator never writes it
// (ForeignOwnerError). Regiment's apply forces only when no such owner is
// found.
//
// Safety lease (Lease, Adapter.Lead, Reverter): the Soldiers of a domain
// campaign for the Lease regiment-soldier-<domain> in
// kubernetes.lease_namespace with leader election (SoldierElection: renewed
// every eighth of kubernetes.lease_duration, leadership lost after half of
// it without a renewal), and only the holder ticks: the lease is both the
// Soldier lock and the heartbeat a Reverter reads. A Reverter, run by the
// leading Commander, gives back the objects of Soldiers whose lease lapsed.
//
// Giving back (original.go, Restorer): before its first write to an object
// (the HPA in hpa-bounds, the workload in replicas) the Actuator records the
// object's own spec in AnnotationOriginal (never overwritten), the domain in
// LabelManagedBy and the lease in AnnotationLease (recordOriginal). The
// Reverter (lease lapsed), Adapter.Restore (mode off) and Restorer
// (`regiment kube restore`, the chart's uninstall hook) write exactly the
// recorded fields back and remove Regiment's labels and annotations; the
// decisions are the pure EncodeOriginal, DecodeOriginal, RecordOriginal and
// PlanRestore. HPAs an older Regiment bounded (LabelManaged and
// AnnotationSafeBounds, no original) go to their safe bounds.
//
// Observation (Observer): informers on Deployments or StatefulSets, HPAs and
// Pods of the apps' namespaces (workloads and HPAs keep only the
// managedFields of the written fields, others none), and KEDA ScaledObjects
// when served (Adapter.WatchKEDA); request rate, p99 latency, error rate, CPU,
// memory and restart rate from the Prometheus HTTP API (a
// promclient.Client: TLS, the bearer token re-read for every query, short
// queries as GETs, long batched ones POSTed). Queries (Metric) come from the
// config, an app set's own before the prometheus block's; a batched query (batch_by) is sent once per tick for
// every app that shares it and matched back to apps by label, a per-app one
// once per app (planQueries).
// Stale and missing metrics are flagged (Observer.Status), never silently
// zero: stale ones hold their last value for prometheus.max_age, missing ones
// mark the app Blind (soldier.AppObservation), and the executor holds its
// target; see Observer.
//
// Discovery (Discoverer): for a domain with a discover block, informers per
// namespace and kind filtered by its label selector list the workloads
// (Found: pod selector's match labels, pods' summed CPU requests);
// domains.Config.WithDiscovered turns the list into the domain's apps, and
// Adapter.SetApps moves the Observer and the Actuator (SetTargets, by app
// name) to them between two Soldier ticks. A discovered app's name depends
// on its workload and the discover block only (domains.Discover.AppName).
// The Observer also reports each app's pod startup (creation to Ready, the
// median over its ready pods), from which with its CPU, load and p99 the
// Soldier learns the service time of an app whose config sets none
// (soldier.Learning).
//
// The Commander's pool (its size, the balloons that hold its capacity plan)
// is package internal/adapter/kube/pool, over this package's Discoverer,
// DropManagedFields, ApplyOptions and PodRequestCores; this package never
// imports it.
//
// Leader election is package internal/adapter/kube/leader (leader.Elect):
// the Commander publishes only while it leads (leader.CommanderLease), and
// a Soldier ticks only while it leads its lease (Adapter.Lead on the
// election SoldierElection).
//
// Concurrency: Actuator, Lease and Reverter are
// safe for concurrent use; an Observer's Observe must not run concurrently
// with itself or SetTargets.
// Units: replicas are counts, rates per second, latencies seconds, CPU a share
// of requested cores in [0, 1], memory a share of requested memory (>= 0),
// restarts per minute.
//
// Package kube imports client-go, go-hclog, x/time/rate, domains, soldier,
// promclient and kube/leader; the cores never import it. Its tests run
// against a real etcd and kube-apiserver (and, for the end-to-end tests,
// kube-controller-manager, kube-scheduler and kwok) started by
// internal/adapter/kube/testenv from binaries built by hack/k8s-testenv.sh,
// and read metrics from the real PromQL engine (promclient/promtest).
package kube
