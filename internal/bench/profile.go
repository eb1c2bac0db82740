package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// CPUProfile fetches a CPU profile of node i over d from its pprof
// endpoint (behind the admin token) and writes it to path. It blocks for
// d; run it beside the load.
func (c *Cluster) CPUProfile(ctx context.Context, i int, d time.Duration, path string) error {
	return c.Profile(ctx, i, fmt.Sprintf("profile?seconds=%d", max(1, int(d.Seconds()))), path)
}

// HeapProfile fetches node i's heap profile (after a GC) and writes it to
// path.
func (c *Cluster) HeapProfile(ctx context.Context, i int, path string) error {
	return c.Profile(ctx, i, "heap?gc=1", path)
}

// Profile fetches /admin/v1/debug/pprof/<name> (a profile and its query)
// of node i and writes it to path.
func (c *Cluster) Profile(ctx context.Context, i int, name, path string) error {
	url := fmt.Sprintf("http://%s/admin/v1/debug/pprof/%s", c.URLs[i], name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: status %d", name, resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
