package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// slowHashPackages are the packages whose functions are slow on purpose
// (password hashes): none of them may run when a package is initialised,
// or every command of the binary (lookout ping included) pays for it.
var slowHashPackages = map[string]bool{"bcrypt": true, "argon2": true, "scrypt": true, "pbkdf2": true}

// TestNoSlowHashAtPackageInit looks at every package-level variable and
// init function of the module for a call into a slow hash.
func TestNoSlowHashAtPackageInit(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); strings.HasPrefix(name, ".") && path != root || name == "gen" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			var init ast.Node
			switch d := decl.(type) {
			case *ast.GenDecl:
				if d.Tok == token.VAR {
					init = d
				}
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "init" {
					init = d
				}
			}
			if init == nil {
				continue
			}
			ast.Inspect(init, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false // a function value runs later, if ever
				}
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok && slowHashPackages[pkg.Name] {
						t.Errorf("%s: %s.%s runs at package initialisation; make it lazy", fset.Position(call.Pos()), pkg.Name, sel.Sel.Name)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
