// The Kubernetes version is not chosen here: build.sh builds this package with
// -modfile=versions/<minor>/go.mod (KUBERNETES_VERSION; default the newest). The go
// command needs a go.mod at the module root to find it, and does not read this one then.
module pod-decorator/e2e/controlplane

go 1.26.0
