package main

// The RBAC objects a kube-apiserver creates when it starts (its rbac/bootstrap-roles post-start
// hook, pkg/registry/rbac/rest/storage_rbac.go): bootstrappolicy's ClusterRoles plus
// ControllerRoles, ClusterRoleBindings plus ControllerRoleBindings, NamespaceRoles and
// NamespaceRoleBindings. They are read from the k8s.io/kubernetes module's test fixtures, which
// policy_test.go keeps equal to what those functions return with the default feature gates of the
// release (cluster-roles-featuregates.yaml, the all-alpha-and-beta variant, is left out). The
// hook creates them as they are, so only the server-set metadata is missing.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"sigs.k8s.io/yaml"
)

const rbacGroupVersion = "rbac.authorization.k8s.io/v1"

// rbacFixtures: the fixture files of the bootstrap policy, by the output array and kind their
// items go to. The output arrays are written in this order.
var rbacFixtures = []struct {
	key, kind string
	files     []string
}{
	{"clusterRoles", "ClusterRole", []string{"cluster-roles.yaml", "controller-roles.yaml"}},
	{"clusterRoleBindings", "ClusterRoleBinding", []string{"cluster-role-bindings.yaml", "controller-role-bindings.yaml"}},
	{"roles", "Role", []string{"namespace-roles.yaml"}},
	{"roleBindings", "RoleBinding", []string{"namespace-role-bindings.yaml"}},
}

// rbacItems reads a fixture (a YAML v1 List) and returns its items, each checked to be of kind.
func rbacItems(path, kind string) []map[string]any {
	data, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	body, err := yaml.YAMLToJSON(data)
	if err != nil {
		fail("%s: %v", path, err)
	}
	var list struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	// UseNumber: the fixtures hold no numbers today, but a float64 round trip must not creep in.
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&list); err != nil {
		fail("%s: %v", path, err)
	}
	if list.Kind != "List" || len(list.Items) == 0 {
		fail("%s: not a non-empty List (kind %q, %d items)", path, list.Kind, len(list.Items))
	}
	for _, item := range list.Items {
		if item["apiVersion"] != rbacGroupVersion || item["kind"] != kind {
			fail("%s: item of %v %v, want %s %s", path, item["apiVersion"], item["kind"], rbacGroupVersion, kind)
		}
	}
	return list.Items
}

// rbacMetadata keeps what the bootstrap policy sets (name, namespace, labels, annotations): the
// server fills in the rest when the object is created, and the fixtures' encoder may write empty
// or null leftovers such as creationTimestamp.
func rbacMetadata(path string, item map[string]any) map[string]any {
	meta, _ := item["metadata"].(map[string]any)
	out := map[string]any{}
	for _, k := range []string{"name", "namespace", "labels", "annotations"} {
		if v, ok := meta[k]; ok && v != nil {
			out[k] = v
		}
	}
	if name, _ := out["name"].(string); name == "" {
		fail("%s: item without a name", path)
	}
	return out
}

func rbacKey(item map[string]any) string {
	meta := item["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	return ns + "\x00" + meta["name"].(string)
}

// writeRBACBootstrap writes rbac-bootstrap.json: one array per kind, each sorted by namespace and
// name, one object a line so that a new release's changes show as line diffs.
func writeRBACBootstrap(out, moduleDir string) {
	dir := filepath.Join(moduleDir, "plugin", "pkg", "auth", "authorizer", "rbac", "bootstrappolicy", "testdata")
	var buf bytes.Buffer
	buf.WriteString("{")
	counts := ""
	for i, f := range rbacFixtures {
		var items []map[string]any
		for _, file := range f.files {
			path := filepath.Join(dir, file)
			for _, item := range rbacItems(path, f.kind) {
				// Everything but the metadata (rules, aggregationRule, roleRef, subjects) as
				// the fixture has it, rules: null of the aggregated roles included: that is what
				// the apiserver stores until the controller manager aggregates their rules.
				item["metadata"] = rbacMetadata(path, item)
				items = append(items, item)
			}
		}
		sort.Slice(items, func(a, b int) bool { return rbacKey(items[a]) < rbacKey(items[b]) })
		for j := 1; j < len(items); j++ {
			if rbacKey(items[j]) == rbacKey(items[j-1]) {
				fail("%s: %q twice in %v", f.kind, rbacKey(items[j]), f.files)
			}
		}
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n" + string(mustJSONLine(f.key)) + ": [")
		for j, item := range items {
			if j > 0 {
				buf.WriteString(",")
			}
			buf.WriteString("\n")
			buf.Write(mustJSONLine(item))
		}
		buf.WriteString("\n]")
		counts += fmt.Sprintf(" %d %s", len(items), f.key)
	}
	buf.WriteString("\n}\n")
	// The whole document must still be one valid JSON value.
	if !json.Valid(buf.Bytes()) {
		fail("rbac-bootstrap.json: invalid JSON")
	}
	writeFile(filepath.Join(out, "rbac-bootstrap.json"), buf.Bytes())
	fmt.Fprintf(os.Stderr, "rbac-bootstrap.json:%s, %d bytes\n", counts, buf.Len())
}

// mustJSONLine is mustJSON without the newline and without HTML escaping (< > & as they are, so
// the file reads like the fixtures).
func mustJSONLine(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fail("%v", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
