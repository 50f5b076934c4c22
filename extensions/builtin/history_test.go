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

// declaration is a Spec field that decides which request fields the host fills
// for an extension: what hook methods must not read without it.
type declaration struct {
	// Name is the sdk.Spec field: ReadsHistory or ReadsPrompt.
	Name string
	// Fields are, per hook method, the request fields the declaration governs,
	// under both their field and getter names. A field governed at one hook may
	// be free at another (PromptTokens at before_main_llm_call).
	Fields map[string][]string
	// What names the governed fields in a problem.
	What string
	// Unread says what reading a governed field without the declaration gets,
	// and what to do instead.
	Unread string
	// Needless says what declaring it without reading costs.
	Needless string
}

// declarations are the Spec fields the check enforces, in the order it reports
// their problems.
var declarations = []declaration{
	{
		Name: "ReadsHistory",
		// sdk.Spec.ReadsHistory: the conversation.
		Fields: map[string][]string{
			"MessageLoopPromptsBefore": {"History", "GetHistory", "Archive", "GetArchive"},
			"MessageLoopPromptsAfter":  {"History", "GetHistory"},
			"MonologueEnd":             {"History", "GetHistory"},
			"BeforeMainLLMCall":        {"Prompt", "GetPrompt"},
		},
		What:     "history or prompt",
		Unread:   "so the host sends it none: declare ReadsHistory: true, or use the context's recent messages (c.Context().GetInteractionHistory().GetRecentMessages())",
		Needless: "the host would send it the whole conversation with every call",
	},
	{
		Name: "ReadsPrompt",
		// sdk.Spec.ReadsPrompt: the prompt as the extensions before it at the
		// same hook left it.
		Fields: map[string][]string{
			"SystemPrompt":            {"SystemPrompt", "GetSystemPrompt"},
			"MessageLoopPromptsAfter": {"Extras", "GetExtras", "PromptTokens", "GetPromptTokens"},
		},
		What:     "prompt so far (SystemPrompt at system_prompt, Extras or PromptTokens at message_loop_prompts_after)",
		Unread:   "so the host sends it empty, and may call it while the extensions before it still run: declare ReadsPrompt: true",
		Needless: "the host would wait for the extensions before it to send it the prompt so far",
	},
}

// historyRead is one place where a hook method reads a field of its request
// that a declaration governs, directly or through a function of its package it
// passes the request to.
type historyRead struct {
	Type, Method, Field string
	Decl                string // the declaration governing Field at Method
	Pos                 token.Position
}

// specDecl is what an extension type's Spec method declares, read from the
// sdk.Spec literal it returns.
type specDecl struct {
	Name string
	// Declares holds the declarations (by Spec field name) the literal sets to true.
	Declares map[string]bool
	Pos      token.Position
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
// with hook methods, where those read a governed field of their request, and
// what the type's Spec declares. File positions are relative to base.
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
	r := &paramReads{fset: fset, funcs: funcs, memo: map[paramKey][]fieldRead{}}
	for _, fd := range methods {
		typ := receiverType(fd)
		if fd.Name.Name == "Spec" {
			out.Specs[typ] = specOf(fset, fd)
			continue
		}
		for _, decl := range declarations {
			fields, ok := decl.Fields[fd.Name.Name]
			if !ok {
				continue
			}
			for _, rd := range r.reads(fd, 2, fields) { // (ctx, *sdk.Call, request)
				out.Reads = append(out.Reads, historyRead{Type: typ, Method: fd.Name.Name, Field: strings.TrimPrefix(rd.field, "Get"), Decl: decl.Name, Pos: rd.pos})
			}
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
	d := specDecl{Pos: fset.Position(fd.Pos()), Declares: map[string]bool{}}
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
			case slices.ContainsFunc(declarations, func(decl declaration) bool { return decl.Name == key.Name }):
				v, _ := kv.Value.(*ast.Ident)
				d.Declares[key.Name] = v != nil && v.Name == "true"
			}
		}
		return false
	})
	return d
}

type paramKey struct {
	fn     *ast.FuncDecl
	idx    int
	fields string // the fields looked for, joined
}

// fieldRead is one read of a request field: the name read (field or getter)
// and where.
type fieldRead struct {
	field string
	pos   token.Position
}

// paramReads finds where a function reads some fields of one of its
// parameters, following the parameter into the functions of the same package
// it is passed to (by name: a method of any receiver with that name counts).
type paramReads struct {
	fset  *token.FileSet
	funcs map[string][]*ast.FuncDecl
	memo  map[paramKey][]fieldRead
}

func (r *paramReads) reads(fd *ast.FuncDecl, idx int, fields []string) []fieldRead {
	// One method is scanned once per declaration: the fields are part of the key.
	k := paramKey{fd, idx, strings.Join(fields, ",")}
	if v, ok := r.memo[k]; ok {
		return v
	}
	r.memo[k] = nil // a cycle reads nothing more
	name := paramName(fd, idx)
	if name == "" || name == "_" {
		return nil
	}
	var out []fieldRead
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == name && slices.Contains(fields, x.Sel.Name) {
				out = append(out, fieldRead{x.Sel.Name, r.fset.Position(x.Pos())})
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
						out = append(out, r.reads(g, i, fields)...)
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
// types' Specs declare, declaration by declaration: a read without the
// declaration finds nothing once the host stops sending the field, and a
// declaration without a read costs every call for nothing (ReadsHistory ships
// the whole conversation, ReadsPrompt keeps the extension from running at the
// same time as the ones before it).
func historyProblems(pkg historyPackage, declared func(typ string) (specDecl, bool)) []string {
	var out []string
	var types []string
	for typ := range pkg.Specs {
		types = append(types, typ)
	}
	slices.Sort(types)
	for _, decl := range declarations {
		readers := map[string]bool{}
		for _, rd := range pkg.Reads {
			if rd.Decl != decl.Name {
				continue
			}
			readers[rd.Type] = true
			d, ok := declared(rd.Type)
			if !ok || d.Declares[decl.Name] {
				continue
			}
			out = append(out, fmt.Sprintf("%s: extension %s (type %s) reads the request's %s in %s, but its Spec does not set %s, %s",
				rd.Pos, d.Name, rd.Type, rd.Field, rd.Method, decl.Name, decl.Unread))
		}
		for _, typ := range types {
			d, ok := declared(typ)
			if ok && d.Declares[decl.Name] && !readers[typ] {
				out = append(out, fmt.Sprintf("%s: extension %s (type %s) declares %s, but none of its hook methods reads the request's %s: drop the declaration (%s)",
					d.Pos, d.Name, typ, decl.Name, decl.What, decl.Needless))
			}
		}
	}
	return out
}

// TestHistoryScanFindsReaders runs the scan on a fixture package with every
// case, for the conversation (readers.go): a declared reader, an undeclared
// one, one reading through a helper, one using the recent messages, and a
// needless declaration; for the prompt so far (prompt.go): a declared reader, an
// undeclared one, one reading through a helper, one declaring only the
// conversation while its helper reads both, one reading only fields no
// declaration governs at its hooks (PromptTokens at before_main_llm_call among
// them), and a needless declaration.
func TestHistoryScanFindsReaders(t *testing.T) {
	pkg, err := historyScan(filepath.Join("testdata", "historyreaders"), ".")
	if err != nil {
		t.Fatal(err)
	}
	got := historyProblems(pkg, func(typ string) (specDecl, bool) { d, ok := pkg.Specs[typ]; return d, ok })
	want := []struct{ at, ext, decl string }{
		{"testdata/historyreaders/readers.go:37:6:", "undeclared", "ReadsHistory"},       // req.History
		{"testdata/historyreaders/readers.go:58:10:", "via_helper", "ReadsHistory"},      // through last(0, r), then tail(req)
		{"testdata/historyreaders/readers.go:80:1:", "needless", "ReadsHistory"},         // its Spec
		{"testdata/historyreaders/prompt.go:31:6:", "tokens_undeclared", "ReadsPrompt"},  // req.PromptTokens
		{"testdata/historyreaders/prompt.go:49:20:", "extras_via_helper", "ReadsPrompt"}, // through titles(req)
		{"testdata/historyreaders/prompt.go:69:37:", "mixed", "ReadsPrompt"},             // req.Extras beside the declared req.GetHistory()
		{"testdata/historyreaders/prompt.go:99:1:", "prompt_needless", "ReadsPrompt"},    // its Spec
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		g := filepath.ToSlash(got[i])
		if !strings.HasPrefix(g, w.at) || !strings.Contains(g, "extension "+w.ext+" ") || !strings.Contains(g, " "+w.decl) {
			t.Errorf("problem %d: got %q, want it at %s, naming extension %s and %s", i, got[i], w.at, w.ext, w.decl)
		}
	}
}

// declares reads the declarations of declarations from spec, failing t when
// one is not a bool field of sdk.Spec.
func declares(t *testing.T, spec sdk.Spec) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, decl := range declarations {
		f := reflect.ValueOf(spec).FieldByName(decl.Name)
		if !f.IsValid() || f.Kind() != reflect.Bool {
			t.Fatalf("sdk.Spec has no bool field %s: update declarations", decl.Name)
		}
		out[decl.Name] = f.Bool()
	}
	return out
}

// TestBuiltinHistoryReadersDeclareIt is the machine check that a built-in
// extension cannot read what the host sends only on declaration without
// declaring it: every hook method of a built-in extension type that reads
// History (or Prompt at before_main_llm_call) of its request belongs to a type
// whose Spec sets ReadsHistory, every one that reads the prompt so far
// (SystemPrompt at system_prompt, Extras or PromptTokens at
// message_loop_prompts_after) to one that sets ReadsPrompt, and every type that
// sets either reads what it declares.
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
	readers := map[string]int{} // by declaration
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
			if !ok || !d.Literal {
				t.Errorf("%s: extension %s (type %s) has no Spec method returning an sdk.Spec literal, so this check cannot read its declarations: write Spec as `return sdk.Spec{...}`", rel, spec.Name, typ)
				continue
			}
			for name, v := range declares(t, spec) {
				if d.Declares[name] != v {
					t.Errorf("%s: extension %s (type %s): the Spec literal's %s (%v) is not what Spec returns (%v): set it in the literal", d.Pos, spec.Name, typ, name, d.Declares[name], v)
				}
			}
		}
		for _, rd := range pkg.Reads {
			if _, ok := types[rd.Type]; ok {
				readers[rd.Decl]++
			}
		}
		problems := historyProblems(pkg, func(typ string) (specDecl, bool) {
			spec, ok := types[typ]
			if !ok {
				return specDecl{}, false // not a built-in extension
			}
			d := pkg.Specs[typ]
			d.Name, d.Declares = spec.Name, declares(t, spec)
			return d, true
		})
		for _, p := range problems {
			t.Error(p)
		}
	}
	// The scan must see the readers there are, or it checks nothing: of the
	// history memorize, the recall filter, ...; of the prompt so far
	// context_watchdog.
	for decl, least := range map[string]int{"ReadsHistory": 5, "ReadsPrompt": 1} {
		if readers[decl] < least {
			t.Errorf("the scan found %d reads governed by %s in the built-in extensions; it is not seeing them", readers[decl], decl)
		}
	}
}
