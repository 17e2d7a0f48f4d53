// Command gen-flowcontrol writes the API Priority and Fairness configuration a 1.36 apiserver
// keeps in every cluster (k8s.io/apiserver's bootstrap package: the mandatory and suggested
// FlowSchemas and PriorityLevelConfigurations, annotated for auto-update) to
// src/data/k8s-1.36/flowcontrol-bootstrap.json, in the order the apiserver's ensurer creates
// them. Run: cd scripts/gen-flowcontrol && go run .
package main

import (
	"encoding/json"
	"os"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
)

const out = "../../src/data/k8s-1.36/flowcontrol-bootstrap.json"

// object is a bootstrap object as a client would create it: names, annotations, spec.
type object struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   metadata `json:"metadata"`
	Spec       any      `json:"spec"`
	Mandatory  bool     `json:"mandatory"`
}

type metadata struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations"`
}

func objects[T any](kind string, mandatory bool, list []*T, meta func(*T) (string, map[string]string), spec func(*T) any) []object {
	var objs []object
	for _, o := range list {
		name, annotations := meta(o)
		objs = append(objs, object{"flowcontrol.apiserver.k8s.io/v1", kind, metadata{name, annotations}, spec(o), mandatory})
	}
	return objs
}

func main() {
	fsMeta := func(o *flowcontrolv1.FlowSchema) (string, map[string]string) { return o.Name, o.Annotations }
	fsSpec := func(o *flowcontrolv1.FlowSchema) any { return o.Spec }
	plMeta := func(o *flowcontrolv1.PriorityLevelConfiguration) (string, map[string]string) {
		return o.Name, o.Annotations
	}
	plSpec := func(o *flowcontrolv1.PriorityLevelConfiguration) any { return o.Spec }
	levels := append(
		objects("PriorityLevelConfiguration", false, bootstrap.SuggestedPriorityLevelConfigurations, plMeta, plSpec),
		objects("PriorityLevelConfiguration", true, bootstrap.MandatoryPriorityLevelConfigurations, plMeta, plSpec)...)
	schemas := append(
		objects("FlowSchema", false, bootstrap.SuggestedFlowSchemas, fsMeta, fsSpec),
		objects("FlowSchema", true, bootstrap.MandatoryFlowSchemas, fsMeta, fsSpec)...)
	data, err := json.Marshal(map[string][]object{"priorityLevelConfigurations": levels, "flowSchemas": schemas})
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
		panic(err)
	}
}
