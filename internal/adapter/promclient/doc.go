// Package promclient is Regiment's client of the Prometheus HTTP API's
// instant queries (Client): client_golang's api/prometheus/v1 over an
// http.Client that prometheus/common/config builds from the config's
// prometheus block, with TLS from its tls block (CA bundle, client
// certificate, server name), the bearer token file re-read on every request
// (a rotated token is used at once) and extra headers. New reads every file
// once, through infile, so that a missing, empty or malformed one is an
// error naming it at start. Short queries are GETs, which read-only proxies
// allow; long ones (a batched query naming hundreds of apps) are POSTed,
// form-encoded.
//
// Query returns a query's single value and QueryVector every series of it;
// ErrNoData (no series) and ErrNotFinite (NaN or an infinity) let callers
// tell "no data" from "Prometheus failed". Which queries to send, and what
// their answers mean, is the Observer's (internal/adapter/kube). A Client is
// safe for concurrent use.
//
// Package promclient imports internal/core/domains, internal/infile and
// prometheus (client_golang's api, common's config and model). Its tests
// answer queries from the real PromQL engine over loaded series
// (promclient/promtest).
package promclient
