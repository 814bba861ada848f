// Command image builds Regiment's container image without a container
// engine: the static binaries (commander, soldier, regiment) and the shipped
// models in one layer on an empty base, run as uid/gid 65532 (nonroot), with
// /etc/passwd and /etc/group naming that user, the build machine's CA bundle
// (so Prometheus and NATS TLS verify) and the OCI labels. It writes an OCI
// image layout directory and a tarball that `docker load`, `crane push` and
// `skopeo copy docker-archive:` take. `make image` runs it.
//
//	go run ./deploy/image --bin bin/image --models models \
//	  --layout bin/regiment-oci --tar bin/regiment-image.tar \
//	  --tag ghcr.io/regimentd/regiment:v0.1.0 --revision $(git rev-parse HEAD)
//
// Invariants: the image is a pure function of its inputs (the files' bytes
// and modes, the labels and the epoch). Every entry of the layer has the
// epoch as its mtime, owner 0:0 (the data directories 65532:65532), no
// user or group names, and entries are written in lexical order; the config's
// created time is the epoch too, so the same inputs give the same digest.
// The epoch comes from --epoch, else SOURCE_DATE_EPOCH, else 0 (1970).
//
// It reads only the files it is given, and writes only --layout and --tar.
package main
