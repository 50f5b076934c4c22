package builtin

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/sdk"
)

// historyFields are, per hook method, the request fields the host fills only
// for an extension that declares ReadsHistory (sdk.Spec.ReadsHistory), under
// both their field and getter names.
var historyFields = map[string][]string{
	"MessageLoopPromptsBefore": {"History", "GetHistory"},
	"MessageLoopPromptsAfter":  {"History", "GetHistory"},
	"MonologueEnd":             {"History", "GetHistory"},
	"BeforeMainLLMCall":        {"Prompt", "GetPrompt"},
}

// historyRead is one place where a hook method reads the history of its
// request, directly or through a function of its package it passes the request to.
type historyRead struct {
	Type, Method, Field string
	Pos                 token.Position
}

// specDecl is what an extension type's Spec method declares, read from the
// sdk.Spec literal it returns.
type specDecl struct {
	Name         string
	ReadsHistory bool
	Pos          token.Position
	// Literal is false when the method returns no sdk.Spec literal the check
	// can read.
	Literal bool
}

// historyPackage is what historyScan finds in one package directory.
type historyPackage struct {
	Reads []historyRead
	Specs map[string]specDecl // by receiver type name
}

// historyScan parses the non-test Go files of dir and finds, for every type
// with hook methods, where those read the history of their request, and what
// the type's Spec declares. File positions are relative to base.
func historyScan(dir, base string) (historyPackage, error) {
	out := historyPackage{Specs: map[string]specDecl{}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out, err
	}
	fset := token.NewFileSet()
	funcs := map[string][]*ast.FuncDecl{} // by name: functions and methods of any receiver
	var methods []*ast.FuncDecl
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		path := filepath.Join(dir, name)
		rel, err := filepath.Rel(base, path)
		if err != nil {
			rel = path
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return out, err
		}
		f, err := parser.ParseFile(fset, filepath.ToSlash(rel), src, 0)
		if err != nil {
			return out, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			funcs[fd.Name.Name] = append(funcs[fd.Name.Name], fd)
			if fd.Recv != nil {
				methods = append(methods, fd)
			}
		}
	}
	r := &paramReads{fset: fset, funcs: funcs, memo: map[paramKey][]token.Position{}}
	for _, fd := range methods {
		typ := receiverType(fd)
		if fd.Name.Name == "Spec" {
			out.Specs[typ] = specOf(fset, fd)
			continue
		}
		fields, ok := historyFields[fd.Name.Name]
		if !ok {
			continue
		}
		r.fields = fields
		for _, pos := range r.reads(fd, 2) { // (ctx, *sdk.Call, request)
			out.Reads = append(out.Reads, historyRead{Type: typ, Method: fd.Name.Name, Field: fields[0], Pos: pos})
		}
	}
	return out, nil
}

// receiverType is the name of a method's receiver type, without pointer or
// type parameters.
func receiverType(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// specOf reads the sdk.Spec literal a Spec method returns.
func specOf(fset *token.FileSet, fd *ast.FuncDecl) specDecl {
	d := specDecl{Pos: fset.Position(fd.Pos())}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		ret, ok := n.(*ast.ReturnStmt)
		if !ok || len(ret.Results) != 1 || d.Literal {
			return !d.Literal
		}
		lit, ok := ret.Results[0].(*ast.CompositeLit)
		if !ok {
			return false
		}
		if sel, ok := lit.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Spec" {
			return false
		}
		d.Literal = true
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			switch key, _ := kv.Key.(*ast.Ident); {
			case key == nil:
			case key.Name == "Name":
				if bl, ok := kv.Value.(*ast.BasicLit); ok {
					d.Name = strings.Trim(bl.Value, "\"`")
				}
			case key.Name == "ReadsHistory":
				v, _ := kv.Value.(*ast.Ident)
				d.ReadsHistory = v != nil && v.Name == "true"
			}
		}
		return false
	})
	return d
}

type paramKey struct {
	fn  *ast.FuncDecl
	idx int
}

// paramReads finds where a function reads a history field of one of its
// parameters, following the parameter into the functions of the same package
// it is passed to (by name: a method of any receiver with that name counts).
type paramReads struct {
	fset   *token.FileSet
	funcs  map[string][]*ast.FuncDecl
	fields []string
	memo   map[paramKey][]token.Position
}

func (r *paramReads) reads(fd *ast.FuncDecl, idx int) []token.Position {
	k := paramKey{fd, idx}
	if v, ok := r.memo[k]; ok {
		return v
	}
	r.memo[k] = nil // a cycle reads nothing more
	name := paramName(fd, idx)
	if name == "" || name == "_" {
		return nil
	}
	var out []token.Position
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == name && slices.Contains(r.fields, x.Sel.Name) {
				out = append(out, r.fset.Position(x.Pos()))
			}
		case *ast.CallExpr:
			var callee string
			switch f := x.Fun.(type) {
			case *ast.Ident:
				callee = f.Name
			case *ast.SelectorExpr:
				callee = f.Sel.Name
			}
			for i, arg := range x.Args {
				if id, ok := arg.(*ast.Ident); ok && id.Name == name {
					for _, g := range r.funcs[callee] {
						out = append(out, r.reads(g, i)...)
					}
				}
			}
		}
		return true
	})
	r.memo[k] = out
	return out
}

// paramName is the name of a function's idx-th parameter ("" when it has none).
func paramName(fd *ast.FuncDecl, idx int) string {
	i := 0
	for _, f := range fd.Type.Params.List {
		if len(f.Names) == 0 {
			if i == idx {
				return ""
			}
			i++
			continue
		}
		for _, n := range f.Names {
			if i == idx {
				return n.Name
			}
			i++
		}
	}
	return ""
}

// historyProblems compares what a package's hook methods read with what their
// types' Specs declare: a read without ReadsHistory finds nothing once the host
// stops sending the history, and ReadsHistory without a read ships the whole
// conversation with every call for nothing.
func historyProblems(pkg historyPackage, declared func(typ string) (specDecl, bool)) []string {
	var out []string
	readers := map[string]bool{}
	for _, rd := range pkg.Reads {
		readers[rd.Type] = true
		d, ok := declared(rd.Type)
		if !ok || d.ReadsHistory {
			continue
		}
		out = append(out, fmt.Sprintf("%s: extension %s (type %s) reads the request's %s in %s, but its Spec does not set ReadsHistory, so the host sends it none: "+
			"declare ReadsHistory: true, or use the context's recent messages (c.Context().GetInteractionHistory().GetRecentMessages())",
			rd.Pos, d.Name, rd.Type, rd.Field, rd.Method))
	}
	var types []string
	for typ := range pkg.Specs {
		types = append(types, typ)
	}
	slices.Sort(types)
	for _, typ := range types {
		d, ok := declared(typ)
		if ok && d.ReadsHistory && !readers[typ] {
			out = append(out, fmt.Sprintf("%s: extension %s (type %s) declares ReadsHistory, but none of its hook methods reads the request's history or prompt: "+
				"drop the declaration (the host would send it the whole conversation with every call)", d.Pos, d.Name, typ))
		}
	}
	return out
}

// TestHistoryScanFindsReaders runs the scan on a fixture package with every
// case: a declared reader, an undeclared one, one reading through a helper, one
// using the recent messages, and a needless declaration.
func TestHistoryScanFindsReaders(t *testing.T) {
	pkg, err := historyScan(filepath.Join("testdata", "historyreaders"), ".")
	if err != nil {
		t.Fatal(err)
	}
	got := historyProblems(pkg, func(typ string) (specDecl, bool) { d, ok := pkg.Specs[typ]; return d, ok })
	want := []string{
		"testdata/historyreaders/readers.go:35:", // Undeclared: req.History
		"testdata/historyreaders/readers.go:54:", // ViaHelper: through last(0, r), then tail(req)
		"testdata/historyreaders/readers.go:74:", // Needless's Spec
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(filepath.ToSlash(got[i]), w) {
			t.Errorf("problem %d: got %q, want it at %s", i, got[i], w)
		}
	}
	for _, name := range []string{"undeclared", "via_helper", "needless"} {
		if !strings.Contains(strings.Join(got, "\n"), "extension "+name+" ") {
			t.Errorf("no problem names extension %s:\n%s", name, strings.Join(got, "\n"))
		}
	}
}

// TestBuiltinHistoryReadersDeclareIt is the machine check that a built-in
// extension cannot read the conversation without declaring it: every hook
// method of a built-in extension type that reads History (or Prompt at
// before_main_llm_call) of its request belongs to a type whose Spec sets
// ReadsHistory, and every type that sets it reads it.
func TestBuiltinHistoryReadersDeclareIt(t *testing.T) {
	const module = "github.com/exocortex/exocortex/"
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// The built-in extensions by package and type, with the Spec they return.
	specs := map[string]map[string]sdk.Spec{}
	for _, p := range Plugins() {
		for _, ext := range p.Extensions {
			typ := reflect.TypeOf(ext)
			for typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
			if specs[typ.PkgPath()] == nil {
				specs[typ.PkgPath()] = map[string]sdk.Spec{}
			}
			specs[typ.PkgPath()][typ.Name()] = ext.Spec()
		}
	}
	var pkgs []string
	for p := range specs {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	readers := 0
	for _, pkgPath := range pkgs {
		rel, ok := strings.CutPrefix(pkgPath, module)
		if !ok {
			t.Errorf("built-in extensions of package %s, outside the module: the check cannot read them", pkgPath)
			continue
		}
		pkg, err := historyScan(filepath.Join(root, filepath.FromSlash(rel)), root)
		if err != nil {
			t.Fatalf("%s: %v", pkgPath, err)
		}
		types := specs[pkgPath]
		for typ, spec := range types {
			d, ok := pkg.Specs[typ]
			switch {
			case !ok || !d.Literal:
				t.Errorf("%s: extension %s (type %s) has no Spec method returning an sdk.Spec literal, so this check cannot read its declarations: write Spec as `return sdk.Spec{...}`", rel, spec.Name, typ)
			case d.ReadsHistory != spec.ReadsHistory:
				t.Errorf("%s: extension %s (type %s): the Spec literal's ReadsHistory (%v) is not what Spec returns (%v): set it in the literal", d.Pos, spec.Name, typ, d.ReadsHistory, spec.ReadsHistory)
			}
		}
		for _, rd := range pkg.Reads {
			if _, ok := types[rd.Type]; ok {
				readers++
			}
		}
		problems := historyProblems(pkg, func(typ string) (specDecl, bool) {
			spec, ok := types[typ]
			if !ok {
				return specDecl{}, false // not a built-in extension
			}
			d := pkg.Specs[typ]
			d.Name, d.ReadsHistory = spec.Name, spec.ReadsHistory
			return d, true
		})
		for _, p := range problems {
			t.Error(p)
		}
	}
	// The scan must see the readers there are (memorize, the recall filter,
	// ...), or it checks nothing.
	if readers < 5 {
		t.Fatalf("the scan found %d history reads in the built-in extensions; it is not seeing them", readers)
	}
}
