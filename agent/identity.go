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
	"lookout/internal/agentident"
)

// IDFile is the file in the data dir that keeps the agent's id.
const IDFile = "agent-id"

// LoadID returns the agent's id from dataDir, making a random one (and
// the directory) on first start. A file that holds no valid id (damaged,
// or edited by hand) is an error naming the file and what to do: the
// control plane would refuse the id.
func LoadID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, IDFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil && len(strings.TrimSpace(string(b))) > 0:
		id := strings.TrimSpace(string(b))
		if err := agentident.CheckID(id); err != nil {
			return "", fmt.Errorf("%s does not hold a valid agent id (%s; the agent makes \"ag_\" and 32 hex digits): "+
				"remove the file to give the agent a new id, then `lookout admin agent forget` the old one", path, errorCut(err))
		}
		return id, nil
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
	if err := SaveID(dataDir, id); err != nil {
		return "", err
	}
	return id, nil
}

// SaveID writes id to dataDir's IDFile (atomically): on first start, and
// again after the data dir was removed under a running agent.
func SaveID(dataDir, id string) error {
	if err := atomicfile.Write(filepath.Join(dataDir, IDFile), []byte(id+"\n"), 0o600); err != nil {
		return fmt.Errorf("save the agent id: %w", err)
	}
	return nil
}

// errorCut is err's text, cut so that a file of garbage does not make a
// line of it.
func errorCut(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = strings.ToValidUTF8(s[:120], "") + "..."
	}
	return s
}
