package manage_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The Management API does not depend on the operator API: what both show
// (the plan's JSON form) lives in internal/plans. Tests may import admin
// (to make accounts); the package itself may not.
func TestManageDoesNotImportAdmin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "lookout/control/admin" {
				t.Errorf("%s imports %s", name, path)
			}
		}
	}
}
