package main

// crossCheck: the table against the generated.proto files of the modules, which gogo's generated
// marshalling code follows. Every message must exist there with exactly the table's fields
// (numbers, names, scalar types, message types, repeated / map), so that struct tags that are
// hand-written and wrong cannot put a wrong fact into the table.

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

type protoField struct {
	typ      string // int32, string, a message name (fully qualified), map<K,V>
	repeated bool
	name     string
}

var (
	protoPackage = regexp.MustCompile(`^package ([\w.]+);`)
	protoMessage = regexp.MustCompile(`^message (\w+) \{`)
	protoFieldRe = regexp.MustCompile(`^\s+(optional|repeated)? ?(map<\w+, ?[\w.]+>|[\w.]+) (\w+) = (\d+);`)
)

// parseProtos reads every generated.proto under the module directories.
func parseProtos(dirs []string) map[string]map[int]protoField {
	out := map[string]map[int]protoField{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "generated.proto" {
				return err
			}
			parseProto(path, out)
			return nil
		})
		if err != nil {
			fail("%v", err)
		}
	}
	return out
}

func parseProto(path string, out map[string]map[int]protoField) {
	data, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	pkg, msg := "", ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if m := protoPackage.FindStringSubmatch(line); m != nil {
			pkg = m[1]
		} else if m := protoMessage.FindStringSubmatch(line); m != nil {
			msg = pkg + "." + m[1]
			out[msg] = map[int]protoField{}
		} else if m := protoFieldRe.FindStringSubmatch(line); m != nil && msg != "" {
			typ := qualify(pkg, m[2])
			if k, v, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(m[2], "map<"), ">"), ","); ok {
				typ = "map<" + k + "," + qualify(pkg, strings.TrimSpace(v)) + ">"
			}
			var n int
			for _, c := range m[4] {
				n = n*10 + int(c-'0')
			}
			out[msg][n] = protoField{typ: typ, repeated: m[1] == "repeated", name: m[3]}
		}
	}
}

// qualify: a field type as a fully qualified name (without the leading dot).
func qualify(pkg, typ string) string {
	switch {
	case scalarProtoType(typ):
		return typ
	case strings.HasPrefix(typ, "."):
		return typ[1:]
	case strings.Contains(typ, "."):
		return typ
	}
	return pkg + "." + typ
}

func scalarProtoType(t string) bool {
	switch t {
	case "int32", "int64", "uint32", "uint64", "bool", "string", "bytes", "double", "float":
		return true
	}
	return false
}

// protoTypeOf: the generated.proto spelling of a table kind (`@name` not yet resolved to an index).
func protoTypeOf(kind string) (string, bool) {
	repeated := strings.HasPrefix(kind, "[]")
	kind = strings.TrimPrefix(kind, "[]")
	if v, ok := strings.CutPrefix(kind, "map[string]"); ok {
		t, _ := protoTypeOf(v)
		return "map<string," + t + ">", false
	}
	switch kind {
	case "float64":
		return "double", repeated
	case "float32":
		return "float", repeated
	}
	return strings.TrimPrefix(kind, "@"), repeated
}

func moduleDirs() []string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/kube-aggregator").Output()
	if err != nil {
		fail("go list -m: %v", err)
	}
	return strings.Fields(string(out))
}

func crossCheck(tb *table) {
	protos := parseProtos(moduleDirs())
	for _, m := range tb.messages {
		pm, ok := protos[m.name]
		if !ok {
			fail("message %s is not in any generated.proto", m.name)
		}
		wire := 0
		for _, f := range m.fields {
			if !f.jsonOnly {
				wire++
			}
		}
		if len(pm) != wire {
			fail("%s: %d fields in generated.proto, %d in the table", m.name, len(pm), wire)
		}
		for _, f := range m.fields {
			if f.jsonOnly {
				continue
			}
			pf, ok := pm[f.number]
			typ, repeated := protoTypeOf(f.kind)
			switch {
			case !ok:
				fail("%s: field %d is not in generated.proto", m.name, f.number)
			case f.protoName != "" && pf.name != f.protoName:
				fail("%s: field %d is %s in generated.proto, %s in the tag", m.name, f.number, pf.name, f.protoName)
			case pf.typ != typ || pf.repeated != repeated:
				fail("%s.%s: generated.proto has %v %s, the Go type gives %v %s", m.name, pf.name, pf.repeated, pf.typ, repeated, typ)
			}
		}
	}
}
