// Package deploy holds the files that run Lookout: the Dockerfile,
// docker-compose.yml, systemd units and Kubernetes manifests. Its tests
// check them offline against the lookout command line, so that a renamed
// or removed flag fails `make test` instead of a deployment;
// `make deploy-test` (deploy/deploytest) runs docker-compose.yml for real.
package deploy
