package controller

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// informerEvent is what a ResourceEventHandler saw.
type informerEvent struct {
	kind, name, value string
}

// watchConfigMaps starts a SharedInformerFactory on ns and reports its ConfigMap events.
func watchConfigMaps(t *testing.T, cs kubernetes.Interface, ns string) (<-chan informerEvent, func(name string) (*corev1.ConfigMap, error)) {
	t.Helper()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	cms := factory.Core().V1().ConfigMaps()
	events := make(chan informerEvent, 100)
	_, err := cms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			cm := obj.(*corev1.ConfigMap)
			events <- informerEvent{"ADDED", cm.Name, cm.Data["k"]}
		},
		UpdateFunc: func(_, obj any) {
			cm := obj.(*corev1.ConfigMap)
			events <- informerEvent{"MODIFIED", cm.Name, cm.Data["k"]}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			cm := obj.(*corev1.ConfigMap)
			events <- informerEvent{"DELETED", cm.Name, cm.Data["k"]}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	return events, func(name string) (*corev1.ConfigMap, error) { return cms.Lister().ConfigMaps(ns).Get(name) }
}

// next waits for the informer's next event about name.
func next(t *testing.T, events <-chan informerEvent, name string) informerEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-events:
			if e.name == name {
				return e
			}
		case <-timeout:
			t.Fatalf("no informer event about %s within 10s", name)
		}
	}
}

// exercise runs a ConfigMap's life through a clientset and checks an informer sees each step.
func exercise(t *testing.T, cs kubernetes.Interface) {
	ns := newNamespace(t)
	events, get := watchConfigMaps(t, cs, ns)
	cms := cs.CoreV1().ConfigMaps(ns)

	created, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "watched", Labels: map[string]string{"suite": "envtest"}},
		Data:       map[string]string{"k": "one"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if e := next(t, events, "watched"); e != (informerEvent{"ADDED", "watched", "one"}) {
		t.Fatalf("first event %+v, want ADDED", e)
	}
	if cm, err := get("watched"); err != nil || cm.ResourceVersion != created.ResourceVersion {
		t.Fatalf("lister: %v %v", cm, err)
	}

	got, err := cms.Get(ctx, "watched", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "one" || got.UID != created.UID {
		t.Fatalf("get: %v %+v", err, got)
	}
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "suite=envtest"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "watched" {
		t.Fatalf("list: %v %+v", err, list)
	}

	got.Data["k"] = "two"
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if e := next(t, events, "watched"); e != (informerEvent{"MODIFIED", "watched", "two"}) {
		t.Fatalf("second event %+v, want MODIFIED", e)
	}
	if err := cms.Delete(ctx, "watched", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if e := next(t, events, "watched"); e.kind != "DELETED" {
		t.Fatalf("third event %+v, want DELETED", e)
	}

	// A built-in kind of another group, through the same clientset.
	replicas := int32(2)
	labels := map[string]string{"app": "direct"}
	dep, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "direct"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	// Defaults the apiserver fills in.
	if dep.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || dep.Spec.RevisionHistoryLimit == nil ||
		*dep.Spec.RevisionHistoryLimit != 10 || dep.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		t.Fatalf("deployment not defaulted: %+v", dep.Spec)
	}
	scale, err := cs.AppsV1().Deployments(ns).GetScale(ctx, "direct", metav1.GetOptions{})
	if err != nil || scale.Spec.Replicas != 2 {
		t.Fatalf("scale: %v %+v", err, scale)
	}
}

// client-go directly: the typed clientset for CRUD, a SharedInformerFactory (its initial list
// a watch-list stream, as client-go 0.36 does by default) whose informer sees ADDED, MODIFIED
// and DELETED; JSON on the wire, as the transport records. (With no ContentType, client-go
// 0.36's typed clients prefer protobuf; JSON is asked for here, protobuf below.)
func TestClientGoTypedClientsetAndInformer(t *testing.T) {
	jcfg := rest.CopyConfig(cfg)
	jcfg.ContentType = "application/json"
	exerciseRecorded(t, jcfg, "application/json", "application/json") // a JSON watch is not marked ;stream=watch
}

// The same with ContentType application/vnd.kubernetes.protobuf: requests and responses
// (watch streams included) are protobuf.
func TestClientGoProtobuf(t *testing.T) {
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = "application/vnd.kubernetes.protobuf"
	pcfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	exerciseRecorded(t, pcfg, "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;stream=watch")
}

// exerciseRecorded runs exercise through a clientset for config and checks every request sent
// and every response received had the content type wanted.
func exerciseRecorded(t *testing.T, config *rest.Config, want, wantWatch string) {
	rec := &contentTypes{}
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return rec.wrap(rt) })
	exercise(t, kubernetes.NewForConfigOrDie(config))

	rec.mu.Lock()
	defer rec.mu.Unlock()
	var watched bool
	for _, s := range rec.seen {
		t.Logf("%s: sent %q, answered %q", s.request, s.sent, s.response)
		if s.sent != "" && s.sent != want {
			t.Errorf("%s sent %q, want %q", s.request, s.sent, want)
		}
		if strings.Contains(s.request, "watch=true") {
			watched = true
			if s.response != wantWatch {
				t.Errorf("watch %s answered %q, want %q", s.request, s.response, wantWatch)
			}
		} else if s.response != want {
			t.Errorf("%s answered %q, want %q", s.request, s.response, want)
		}
	}
	if !watched {
		t.Error("the informer's watch was not recorded")
	}
}

type exchange struct{ request, sent, response string }

// contentTypes records each request's Content-Type and its response's.
type contentTypes struct {
	mu   sync.Mutex
	seen []exchange
}

func (c *contentTypes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode < 300 {
			c.mu.Lock()
			c.seen = append(c.seen, exchange{
				request:  fmt.Sprintf("%s %s", req.Method, req.URL.RequestURI()),
				sent:     req.Header.Get("Content-Type"),
				response: resp.Header.Get("Content-Type"),
			})
			c.mu.Unlock()
		}
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
