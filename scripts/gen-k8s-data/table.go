package main

// The protobuf field table: every message reachable from a protobuf-capable kind of the scheme,
// with the facts kubefake's transcoder needs per field. The protobuf facts (number, wire type)
// come from the `protobuf:` struct tags, the JSON facts (name, pointer / omitempty / omitzero /
// inline) from the `json:` tags and the Go field types. See writeTable for the format.

import (
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Types whose JSON form is written by hand (MarshalJSON) rather than from their fields. The Rust
// transcoder implements each of them by name; any other type with a custom JSON form stops the
// generator, so a new one cannot slip through unnoticed.
var specials = map[reflect.Type]string{
	reflect.TypeFor[metav1.Time]():          "time",
	reflect.TypeFor[metav1.MicroTime]():     "microtime",
	reflect.TypeFor[metav1.Duration]():      "duration",
	reflect.TypeFor[resource.Quantity]():    "quantity",
	reflect.TypeFor[intstr.IntOrString]():   "intorstring",
	reflect.TypeFor[runtime.RawExtension](): "rawextension",
	reflect.TypeFor[metav1.FieldsV1]():      "fieldsv1",
}

// The protobuf marshalling interface the protobuf serializer requires of an object.
type protoCodec interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

var (
	protoCodecType     = reflect.TypeFor[protoCodec]()
	jsonMarshalerType  = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerTyp = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType  = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerTyp = reflect.TypeFor[encoding.TextUnmarshaler]()
)

type field struct {
	number int
	wire   int
	kind   string // int32, int64, bool, string, bytes, float64, @N, []T, map[K]V
	json   string
	mode   string // P pointer, N pointer without omitempty, O omitempty, Z omitzero, V value, I inline

	// The Go type of the field and of its elements (slices, maps), pointers removed, as Go's
	// reflect.Type.String() spells them: encoding/json names them in its type errors.
	goType, elemType string
	jsonOnly         bool // a field protobuf does not carry (the embedded TypeMeta): a J line

	protoName string // the tag's name=, for the cross-check
}

type message struct {
	name    string // fully qualified protobuf name
	special string // time, microtime, ..., wrapper (a named slice: message { repeated T items = 1 })
	typ     reflect.Type
	index   int
	fields  []field
	kinds   map[string][]string // Kind -> apiVersions
}

type table struct {
	messages map[reflect.Type]*message
	notes    []string // facts worth a look: JSON-only fields, kinds without protobuf
}

// protoName is the protobuf message name of a Go type: its package path with dots, then its name
// (`k8s.io/api/apps/v1.Deployment` -> `k8s.io.api.apps.v1.Deployment`, dashes as underscores:
// `k8s.io.kube_aggregator...`), as go-to-protobuf names it.
func protoName(t reflect.Type) string {
	pkg := strings.ReplaceAll(strings.ReplaceAll(t.PkgPath(), "/", "."), "-", "_")
	return pkg + "." + t.Name()
}

func isWrapper(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Name() != "" && t.Elem().Kind() != reflect.Uint8 &&
		(t.Implements(protoCodecType) || reflect.PointerTo(t).Implements(protoCodecType))
}

// message registers the message of a struct (or named-slice wrapper) type and everything it
// references.
func (tb *table) message(t reflect.Type) *message {
	if m, ok := tb.messages[t]; ok {
		return m
	}
	m := &message{name: protoName(t), typ: t, kinds: map[string][]string{}}
	tb.messages[t] = m
	switch {
	case specials[t] != "":
		m.special = specials[t]
		m.fields = tb.specialFields(t)
	case isWrapper(t):
		m.special = "wrapper"
		m.fields = []field{{number: 1, wire: wireOf(t.Elem()), kind: "[]" + tb.scalarKind(t.Elem()), json: "items", mode: "V", protoName: "items"}}
	default:
		if t.Kind() != reflect.Struct {
			fail("%s: not a struct", m.name)
		}
		if t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType) ||
			reflect.PointerTo(t).Implements(jsonUnmarshalerTyp) {
			fail("%s has a custom JSON form the transcoder does not know", m.name)
		}
		for i := 0; i < t.NumField(); i++ {
			if f, ok := tb.field(t, t.Field(i)); ok {
				m.fields = append(m.fields, f)
			}
		}
	}
	return m
}

// specialFields: the protobuf fields of a type with a hand-written JSON form, named after their
// protobuf names. metav1.Time and MicroTime marshal as a Timestamp; Quantity as one string.
func (tb *table) specialFields(t reflect.Type) []field {
	switch specials[t] {
	case "time", "microtime":
		t = reflect.TypeFor[metav1.Timestamp]()
	case "quantity":
		return []field{{number: 1, wire: 2, kind: "string", json: "string", mode: "V", protoName: "string"}}
	}
	var out []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("protobuf")
		if tag == "" || tag == "-" {
			continue
		}
		p := parseProtoTag(t, sf)
		out = append(out, field{number: p.number, wire: wireOf(sf.Type), kind: tb.kind(sf.Type, p), json: p.name, mode: "V", protoName: p.name})
	}
	return out
}

type protoTag struct {
	wire     int
	number   int
	repeated bool // informational only
	packed   bool
	name     string
}

func parseProtoTag(t reflect.Type, sf reflect.StructField) protoTag {
	parts := strings.Split(sf.Tag.Get("protobuf"), ",")
	if len(parts) < 2 {
		fail("%s.%s: protobuf tag %q", t, sf.Name, sf.Tag.Get("protobuf"))
	}
	var p protoTag
	switch parts[0] {
	case "varint":
		p.wire = 0
	case "fixed64":
		p.wire = 1
	case "bytes":
		p.wire = 2
	case "fixed32":
		p.wire = 5
	default:
		fail("%s.%s: wire type %q is not supported", t, sf.Name, parts[0])
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n <= 0 {
		fail("%s.%s: field number %q", t, sf.Name, parts[1])
	}
	p.number = n
	for _, x := range parts[2:] {
		if x == "rep" {
			p.repeated = true
		}
		if x == "packed" {
			p.packed = true
		}
		if strings.HasPrefix(x, "name=") {
			p.name = x[5:]
		}
	}
	return p
}

// field describes one Go struct field, or reports false for a field protobuf does not carry.
func (tb *table) field(t reflect.Type, sf reflect.StructField) (field, bool) {
	js := sf.Tag.Get("json")
	jsonName, opts, _ := strings.Cut(js, ",")
	tag := sf.Tag.Get("protobuf")
	jsonOnly := tag == "" || tag == "-"
	if jsonOnly && (js == "-" || !sf.IsExported() && !sf.Anonymous) {
		return field{}, false // encoding/json does not see it either
	}
	if js == "-" {
		fail("%s.%s: protobuf field without JSON", t, sf.Name)
	}
	if jsonOnly && !(sf.Anonymous && sf.Type == reflect.TypeFor[metav1.TypeMeta]()) {
		tb.notes = append(tb.notes, fmt.Sprintf("JSON-only field (not in protobuf): %s.%s", protoName(t), sf.Name))
	}
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "", "omitempty", "omitzero", "inline":
		default:
			fail("%s.%s: json option %q is not supported", t, sf.Name, o)
		}
	}
	var p protoTag
	if !jsonOnly {
		p = parseProtoTag(t, sf)
	}
	f := field{number: p.number, wire: p.wire, json: jsonName, jsonOnly: jsonOnly}
	f.goType, f.elemType = goTypes(sf.Type)
	hasOpt := func(o string) bool { return strings.Contains(","+opts+",", ","+o+",") }
	switch {
	case sf.Anonymous && jsonName == "":
		if sf.Type.Kind() == reflect.Pointer {
			fail("%s.%s: embedded pointer", t, sf.Name)
		}
		if sf.Name != sf.Type.Name() {
			fail("%s.%s: an embedded field named otherwise than its type", t, sf.Name)
		}
		f.mode, f.json = "I", "-"
	case sf.Type.Kind() == reflect.Pointer && (hasOpt("omitempty") || hasOpt("omitzero")):
		f.mode = "P"
	case sf.Type.Kind() == reflect.Pointer:
		f.mode = "N"
	case hasOpt("omitzero"):
		f.mode = "Z"
	case hasOpt("omitempty"):
		f.mode = "O"
	default:
		f.mode = "V"
	}
	if f.json == "" {
		f.json = sf.Name // Go's encoding/json uses the field name
	}
	f.kind = tb.kind(sf.Type, p)
	if jsonOnly {
		return f, true
	}
	// The tag's opt/rep is hand-written and not always right (`[]string` tagged `opt`); the
	// Go type decides.
	// The tag's wire type is hand-written too (`*int64` tagged `bytes`); gogo's generated code
	// follows generated.proto, whose types come from the Go types (crossCheck verifies this).
	if want := wireOf(sf.Type); p.packed {
		f.wire = 2
	} else if want != f.wire {
		tb.notes = append(tb.notes, fmt.Sprintf("protobuf tag wire type %d, the Go type %s gives %d: %s.%s",
			f.wire, sf.Type, want, protoName(t), sf.Name))
		f.wire = want
	}
	f.protoName = p.name
	return f, true
}

// goTypes: the Go type of a field and of its elements (for slices other than []byte, and maps),
// pointers removed, as reflect.Type.String() spells them. Types with a hand-written text form
// are refused (encoding/json would use it), and so are pointer elements (the table has no way
// to say that an element may be nil).
func goTypes(t reflect.Type) (string, string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	check := func(t reflect.Type) {
		if specials[t] == "" && (t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerTyp)) {
			fail("%s has a text form the normalizer does not know", t)
		}
	}
	check(t)
	switch {
	case t.Kind() == reflect.Map, t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		if t.Elem().Kind() == reflect.Pointer {
			fail("%s: pointer elements are not supported", t)
		}
		check(t.Elem())
		return t.String(), t.Elem().String()
	}
	return t.String(), ""
}

// goTypeName: the Go type of a message (`v1.Deployment`) as the Rust side derives it from the
// message name: the last element of the package path, then the type's name.
func goTypeName(name string) string {
	parts := strings.Split(name, ".")
	return strings.Join(parts[len(parts)-2:], ".")
}

// defaultGoType: the Go type the Rust side assumes for a kind when the table names none: the
// Go kind itself for scalars (`[]uint8` for bytes), the message's type, `[]T`, `map[string]T`.
func defaultGoType(kind string) string {
	if k, ok := strings.CutPrefix(kind, "[]"); ok {
		return "[]" + defaultGoType(k)
	}
	if k, ok := strings.CutPrefix(kind, "map[string]"); ok {
		return "map[string]" + defaultGoType(k)
	}
	if k, ok := strings.CutPrefix(kind, "@"); ok {
		return goTypeName(k)
	}
	if kind == "bytes" {
		return "[]uint8"
	}
	return kind
}

// defaultElemType: the element type the Rust side assumes when the table names none: the
// field's Go type without its `[]` or `map[K]`, or else (a named slice or map type) the
// element of its kind.
func defaultElemType(kind, goType string) string {
	if e, ok := strings.CutPrefix(goType, "[]"); ok {
		return e
	}
	if strings.HasPrefix(goType, "map[") {
		if _, e, ok := strings.Cut(goType, "]"); ok {
			return e
		}
	}
	k := strings.TrimPrefix(kind, "[]")
	k = strings.TrimPrefix(k, "map[string]")
	return defaultGoType(k)
}

// checkJSONNames: every struct's JSON names, its inline structs' included, are distinct, so that
// Go's rules for conflicting embedded names never apply.
func checkJSONNames(tb *table) {
	byName := map[string]*message{}
	for _, m := range tb.messages {
		byName[m.name] = m
	}
	var names func(m *message, seen map[string]bool)
	names = func(m *message, seen map[string]bool) {
		for _, f := range m.fields {
			if f.mode == "I" {
				names(byName[strings.TrimPrefix(f.kind, "@")], seen)
				continue
			}
			if seen[f.json] {
				fail("%s: JSON name %q appears twice (inline structs included)", m.name, f.json)
			}
			seen[f.json] = true
		}
	}
	for _, m := range tb.messages {
		if goTypeName(m.name) != m.typ.String() {
			fail("%s: Go type %s is not derivable from the message name", m.name, m.typ)
		}
		names(m, map[string]bool{})
	}
}

// wireOf: the wire type of one value of a Go type (of an element, for slices and maps).
func wireOf(t reflect.Type) int {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Int:
		return 0
	case reflect.Float64:
		return 1
	case reflect.Float32:
		return 5
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 || isWrapper(t) {
			return 2
		}
		return wireOf(t.Elem())
	default:
		return 2
	}
}

func (tb *table) kind(t reflect.Type, p protoTag) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Map:
		if t.Key().Kind() != reflect.String {
			fail("%s: map key must be a string", t)
		}
		return "map[string]" + tb.scalarKind(t.Elem())
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 && !isWrapper(t):
		return "[]" + tb.scalarKind(t.Elem())
	}
	return tb.scalarKind(t)
}

// scalarKind: a single value's kind; messages are written `@<index>` once indexes are known,
// and `@<name>` until then.
func (tb *table) scalarKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int32:
		return "int32"
	case reflect.Int64:
		return "int64"
	case reflect.Uint32:
		return "uint32"
	case reflect.Uint64:
		return "uint64"
	case reflect.Float64:
		return "float64"
	case reflect.Float32:
		return "float32"
	case reflect.String:
		return "string"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		if isWrapper(t) {
			return "@" + tb.message(t).name
		}
	case reflect.Struct:
		return "@" + tb.message(t).name
	}
	fail("Go type %s (%s) is not supported", t, t.Kind())
	return ""
}

// writeTable writes the table in its line format (documented in src/typed/model.rs):
//
//	M <index> <full name> [<special>]
//	K <Kind> <apiVersion>...
//	<number> <wire type> <Go kind> <JSON name> <mode> [<Go type> [<element Go type>]]
//	J <Go kind> <JSON name> <mode> [<Go type> [<element Go type>]]    (a JSON-only field)
//
// The Go types are written only where they differ from what the kind implies (see
// defaultGoType and defaultElemType); `.` stands for the implied type before an element type.
func writeTable(w io.Writer, tb *table, header []string) {
	msgs := make([]*message, 0, len(tb.messages))
	for _, m := range tb.messages {
		msgs = append(msgs, m)
	}
	sort.Slice(msgs, func(i, j int) bool { return msgs[i].name < msgs[j].name })
	index := map[string]int{}
	for i, m := range msgs {
		if _, dup := index[m.name]; dup {
			fail("two Go types named %s", m.name)
		}
		m.index = i
		index[m.name] = i
	}
	ref := func(kind string) string {
		at := strings.Index(kind, "@")
		if at < 0 {
			return kind
		}
		return kind[:at+1] + strconv.Itoa(index[kind[at+1:]])
	}
	for _, h := range header {
		fmt.Fprintf(w, "# %s\n", h)
	}
	for _, m := range msgs {
		line := fmt.Sprintf("M %d %s", m.index, m.name)
		if m.special != "" {
			line += " " + m.special
		}
		fmt.Fprintln(w, line)
		kinds := make([]string, 0, len(m.kinds))
		for k := range m.kinds {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			versions := m.kinds[k]
			sort.Strings(versions)
			fmt.Fprintf(w, "K %s %s\n", k, strings.Join(versions, " "))
		}
		for _, f := range m.fields {
			head := fmt.Sprintf("%d %d", f.number, f.wire)
			if f.jsonOnly {
				head = "J"
			}
			line := fmt.Sprintf("%s %s %s %s", head, ref(f.kind), f.json, f.mode)
			goType, elemType := ".", ""
			if f.goType != "" && f.goType != defaultGoType(f.kind) {
				goType = f.goType
			}
			if f.elemType != "" && f.elemType != defaultElemType(f.kind, f.goType) {
				elemType = f.elemType
			}
			switch {
			case elemType != "":
				line += " " + goType + " " + elemType
			case goType != ".":
				line += " " + goType
			}
			fmt.Fprintln(w, line)
		}
	}
}
