package main

// The published API definitions of Kubernetes itself, as the k8s.io/kubernetes module carries
// them (api/openapi-spec/v3 and api/discovery): the OpenAPI v3 documents kubefake serves for its
// built-in group-versions, the structural schemas of their types, and the discovery facts of
// every built-in resource. k8s.io/kubernetes is not importable (its go.mod replaces its staging
// modules), so its pinned version is downloaded with `go mod download` and read as files.

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// kubernetesModule is the pinned source of the API definitions and of the bootstrap RBAC policy
// (rbac.go).
const kubernetesModule = "k8s.io/kubernetes@v1.36.0"

// servedGroupVersions are the group-versions whose OpenAPI documents kubefake serves, by the file
// name stem the module uses (api__v1, apis__apps__v1, ...).
var servedGroupVersions = []string{
	"api__v1",
	"apis__admissionregistration.k8s.io__v1",
	"apis__apiextensions.k8s.io__v1",
	"apis__apiregistration.k8s.io__v1",
	"apis__apps__v1",
	"apis__authentication.k8s.io__v1",
	"apis__authorization.k8s.io__v1",
	"apis__autoscaling__v1",
	"apis__autoscaling__v2",
	"apis__batch__v1",
	"apis__certificates.k8s.io__v1",
	"apis__coordination.k8s.io__v1",
	"apis__discovery.k8s.io__v1",
	"apis__events.k8s.io__v1",
	"apis__flowcontrol.apiserver.k8s.io__v1",
	"apis__networking.k8s.io__v1",
	"apis__node.k8s.io__v1",
	"apis__policy__v1",
	"apis__rbac.authorization.k8s.io__v1",
	"apis__resource.k8s.io__v1",
	"apis__scheduling.k8s.io__v1",
	"apis__storage.k8s.io__v1",
}

// structuralKeys are the schema keywords kubefake's structural schemas use (descriptions, examples
// and the like stay in the served documents only).
var structuralKeys = map[string]bool{
	"type": true, "format": true, "properties": true, "items": true, "additionalProperties": true,
	"allOf": true, "$ref": true, "required": true, "enum": true, "default": true, "nullable": true,
	"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true,
	"x-kubernetes-embedded-resource": true, "x-kubernetes-list-type": true,
	"x-kubernetes-list-map-keys": true, "x-kubernetes-map-type": true,
	"x-kubernetes-patch-strategy": true, "x-kubernetes-patch-merge-key": true,
	"x-kubernetes-group-version-kind": true, "x-kubernetes-unions": false,
}

// kubernetesModuleDir downloads the pinned module (through the Go module proxy) and returns its
// directory and go.sum hash.
func kubernetesModuleDir() (string, string) {
	out, err := exec.Command("go", "mod", "download", "-json", kubernetesModule).Output()
	if err != nil {
		fail("go mod download %s: %v", kubernetesModule, err)
	}
	var info struct{ Dir, Sum string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		fail("go mod download %s: unexpected output %s", kubernetesModule, out)
	}
	return info.Dir, info.Sum
}

// gzipped compresses deterministically (no name, no modification time).
func gzipped(data []byte) []byte {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		fail("%v", err)
	}
	if _, err := w.Write(data); err != nil {
		fail("%v", err)
	}
	if err := w.Close(); err != nil {
		fail("%v", err)
	}
	return buf.Bytes()
}

func readJSON(path string, into any) {
	data, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		fail("%s: %v", path, err)
	}
}

// structural keeps a schema's structural keywords, recursively.
func structural(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, val := range m {
		if !structuralKeys[k] {
			continue
		}
		switch k {
		case "properties":
			props := map[string]any{}
			for name, p := range val.(map[string]any) {
				props[name] = structural(p)
			}
			out[k] = props
		case "items", "additionalProperties":
			out[k] = structural(val)
		case "allOf":
			var list []any
			for _, e := range val.([]any) {
				list = append(list, structural(e))
			}
			out[k] = list
		default:
			out[k] = val
		}
	}
	return out
}

// writeAPIData writes openapi/*.json.gz and openapi/index.json (served documents and their
// hashes), schemas.json (the structural schemas of every component of the served documents) and
// discovery.json (aggregated discovery of every built-in resource, with storage version hashes),
// from the module directory dir.
func writeAPIData(out, dir string) {
	specs := filepath.Join(dir, "api", "openapi-spec", "v3")
	index := map[string]map[string]string{}
	components := map[string]any{}
	for _, stem := range servedGroupVersions {
		var doc map[string]any
		readJSON(filepath.Join(specs, stem+"_openapi.json"), &doc)
		body, err := json.Marshal(doc)
		if err != nil {
			fail("%v", err)
		}
		file := stem + ".json.gz"
		writeFile(filepath.Join(out, "openapi", file), gzipped(body))
		path := strings.ReplaceAll(stem, "__", "/")
		index[path] = map[string]string{"file": file, "hash": fmt.Sprintf("%X", sha512.Sum512(body))}
		schemas, _ := doc["components"].(map[string]any)["schemas"].(map[string]any)
		for name, s := range schemas {
			components[name] = structural(s)
		}
	}
	writeFile(filepath.Join(out, "openapi", "index.json"), mustJSON(index))
	writeFile(filepath.Join(out, "schemas.json"), mustJSON(components))
	writeFile(filepath.Join(out, "discovery.json"), mustJSON(discovery(dir)))
}

// discovery: the groups under /apis in the apiserver's order (with their versions, preferred
// first), and every group-version's legacy resource list (names, kinds, scopes, verbs, short
// names, categories, storage version hashes, subresources as `plural/sub` entries), keyed by
// groupVersion.
func discovery(dir string) map[string]any {
	base := filepath.Join(dir, "api", "discovery")
	var apis map[string]any
	readJSON(filepath.Join(base, "apis.json"), &apis)
	files, err := filepath.Glob(filepath.Join(base, "api*__*.json"))
	if err != nil {
		fail("%v", err)
	}
	sort.Strings(files)
	lists := map[string]any{}
	for _, f := range files {
		var list map[string]any
		readJSON(f, &list)
		gv, _ := list["groupVersion"].(string)
		if gv == "" {
			continue
		}
		lists[gv] = list["resources"]
	}
	return map[string]any{"groups": apis["groups"], "resources": lists}
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		fail("%v", err)
	}
	return append(data, '\n')
}
