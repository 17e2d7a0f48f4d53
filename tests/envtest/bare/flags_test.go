package bare

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// A feature gate the 1.36 apiserver does not know, or one locked to its default, stops the
// control plane at start with the apiserver's own error, as a real kube-apiserver does.
func TestUnknownAndLockedFeatureGatesAreRefused(t *testing.T) {
	for gates, want := range map[string]string{
		"Foo=true":                          `err="unrecognized feature gate: Foo"`,
		"AggregatedDiscoveryEndpoint=false": `err="unrecognized feature gate: AggregatedDiscoveryEndpoint"`,
		"APIServerTracing=false":            `err="cannot set feature gate APIServerTracing to false, feature is locked to true"`,
	} {
		env := &envtest.Environment{}
		var stderr bytes.Buffer
		apiserver := env.ControlPlane.GetAPIServer()
		apiserver.Err = &stderr
		apiserver.Configure().Append("feature-gates", gates)
		if _, err := env.Start(); err == nil {
			_ = env.Stop()
			t.Fatalf("--feature-gates=%s: the control plane started", gates)
		}
		_ = env.Stop()
		if !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), `run.go:72] "command failed"`) {
			t.Errorf("--feature-gates=%s: stderr %q, want %s", gates, stderr.String(), want)
		}
	}
}

// The service range envtest passes (10.0.0.0/24) is the cluster's: the kubernetes Service is
// 10.0.0.1 and the default ServiceCIDR is that range; a known gate may be set.
func TestTheServiceRangeIsEnvtests(t *testing.T) {
	env := &envtest.Environment{}
	env.ControlPlane.GetAPIServer().Configure().Append("feature-gates", "APIServerTracing=true")
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest Start: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	cs := kubernetes.NewForConfigOrDie(cfg)
	svc, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get the kubernetes Service: %v", err)
	}
	if svc.Spec.ClusterIP != "10.0.0.1" {
		t.Errorf("kubernetes Service at %s, want 10.0.0.1", svc.Spec.ClusterIP)
	}
	cidr, err := cs.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get the default ServiceCIDR: %v", err)
	}
	if got := strings.Join(cidr.Spec.CIDRs, ","); got != "10.0.0.0/24" {
		t.Errorf("default ServiceCIDR %s, want 10.0.0.0/24", got)
	}
}
