package agent

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"lookout/agent/atomicfile"
)

// IDFile is the file in the data dir that keeps the agent's id.
const IDFile = "agent-id"

// LoadID returns the agent's id from dataDir, making a random one (and
// the directory) on first start.
func LoadID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, IDFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil && len(strings.TrimSpace(string(b))) > 0:
		return strings.TrimSpace(string(b)), nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read the agent id: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("create the data dir: %w", err)
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	id := "ag_" + hex.EncodeToString(raw[:])
	if err := atomicfile.Write(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("save the agent id: %w", err)
	}
	return id, nil
}
