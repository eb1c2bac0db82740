package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// compose runs docker-compose (Debian's 1.29 or any later one) on one
// project of deploy/docker-compose.yml, and docker on its containers.
type compose struct {
	project string
	files   []string
	// env is added to this process's environment for docker-compose: the
	// images, the tokens, and empty host ports (random ones, so nothing
	// on the machine collides with the test).
	env []string
	// verbose prints every command and its output.
	verbose bool
}

// run runs docker-compose with the project, the file and the agents
// profile (so that down also removes the agents).
func (c *compose) run(ctx context.Context, args ...string) (string, error) {
	full := []string{"-p", c.project}
	for _, f := range c.files {
		full = append(full, "-f", f)
	}
	full = append(append(full, "--profile", "agents"), args...)
	return c.exec(ctx, "docker-compose", full...)
}

// docker runs docker.
func (c *compose) docker(ctx context.Context, args ...string) (string, error) {
	return c.exec(ctx, "docker", args...)
}

func (c *compose) exec(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), c.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	if c.verbose {
		fmt.Printf("    $ %s %s (%s)\n%s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond), indent(out.String()))
	}
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, indent(lastLines(out.String(), 20)))
	}
	return out.String(), nil
}

// container is the id of a service's container.
func (c *compose) container(ctx context.Context, service string) (string, error) {
	out, err := c.run(ctx, "ps", "-q", service)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(out)
	if id == "" || strings.Contains(id, "\n") {
		return "", fmt.Errorf("service %s: want one container, have %q", service, id)
	}
	return id, nil
}

// network is the Docker name of one of the file's networks.
func (c *compose) network(name string) string { return c.project + "_" + name }

// ip is the address of a service's container on one of the file's
// networks. The host reaches it directly (Linux), so the test needs no
// published port and survives a container's restart with a new address.
func (c *compose) ip(ctx context.Context, service, network string) (string, error) {
	id, err := c.container(ctx, service)
	if err != nil {
		return "", err
	}
	out, err := c.docker(ctx, "inspect", "-f", "{{json .NetworkSettings.Networks}}", id)
	if err != nil {
		return "", err
	}
	var nets map[string]struct {
		IPAddress string `json:"IPAddress"`
	}
	if err := json.Unmarshal([]byte(out), &nets); err != nil {
		return "", fmt.Errorf("docker inspect %s: %w", id, err)
	}
	n, ok := nets[c.network(network)]
	if !ok || n.IPAddress == "" {
		return "", fmt.Errorf("service %s has no address on network %s", service, c.network(network))
	}
	return n.IPAddress, nil
}

// logs is the tail of the logs of services (all when none).
func (c *compose) logs(ctx context.Context, tail int, services ...string) string {
	out, _ := c.run(ctx, append([]string{"logs", "--no-color", "--tail", fmt.Sprint(tail)}, services...)...)
	return out
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "      " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n      ") + "\n"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
