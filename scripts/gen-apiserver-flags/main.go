// Command gen-apiserver-flags writes what a 1.36 kube-apiserver checks its `--feature-gates`,
// `--runtime-config` and admission plugin flags against to
// src/data/k8s-1.36/apiserver-flags.json: every feature gate registered by the time its
// command is built (name, default, lock, stage, the gates it depends on), every group-version
// its schemes register, every admission plugin and those off by default. It imports the apiserver's own
// command, so every package that registers gates has run its init.
// Run: cd scripts/gen-apiserver-flags && go run .
package main

import (
	"encoding/json"
	"os"
	"sort"

	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	kubeoptions "k8s.io/kubernetes/pkg/kubeapiserver/options"
)

const out = "../../src/data/k8s-1.36/apiserver-flags.json"

type gate struct {
	Name      string   `json:"name"`
	Default   bool     `json:"default"`
	Locked    bool     `json:"locked"`
	Stage     string   `json:"stage"`
	DependsOn []string `json:"dependsOn,omitempty"`
}

func main() {
	_ = app.NewAPIServerCommand()
	fg := utilfeature.DefaultMutableFeatureGate
	deps := fg.Dependencies()
	var gates []gate
	for name, spec := range fg.GetAll() {
		var on []string
		for _, d := range deps[name] {
			on = append(on, string(d))
		}
		sort.Strings(on)
		gates = append(gates, gate{string(name), spec.Default, spec.LockToDefault, string(spec.PreRelease), on})
	}
	sort.Slice(gates, func(i, j int) bool { return gates[i].Name < gates[j].Name })
	var groupVersions []string
	for _, scheme := range []*runtime.Scheme{legacyscheme.Scheme, apiextensionsapiserver.Scheme, aggregatorscheme.Scheme} {
		for _, gv := range scheme.PrioritizedVersionsAllGroups() {
			groupVersions = append(groupVersions, gv.String())
		}
	}
	sort.Strings(groupVersions)
	defaultOff := sets.List(kubeoptions.DefaultOffAdmissionPlugins())
	data, err := json.Marshal(map[string]any{
		"featureGates":               gates,
		"groupVersions":              groupVersions,
		"admissionPlugins":           kubeoptions.AllOrderedPlugins,
		"defaultOffAdmissionPlugins": defaultOff,
	})
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
		panic(err)
	}
}
